/** The time of the last `isoTime` call that formatted a whole date: its second, and its text up to that second. */
let cachedSecond = Number.NaN;
let cachedPrefix = "";

/**
 * `new Date(ms).toISOString()` for a time value `ms` (an integer, as `Date#getTime` gives; an
 * invalid one throws the same `RangeError`), at a fraction of its cost on the append path: the
 * text up to the second (`2026-11-26T02:40:00.`) is kept from the previous call, and while the
 * second is the same only the milliseconds are written. Years 0–9999 only are kept (the
 * 24-character form); other times are formatted whole each time.
 */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond || !Number.isInteger(ms)) {
    const iso = new Date(ms).toISOString();
    if (iso.length === 24 && Number.isInteger(ms)) {
      cachedSecond = second;
      cachedPrefix = iso.slice(0, 20);
    }
    return iso;
  }
  const milli = ms - second * 1000;
  return `${cachedPrefix}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z`;
}
