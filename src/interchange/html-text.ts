/**
 * Text made safe for HTML element content and quoted attribute values; the line separators U+2028
 * and U+2029 become character references too, so none is in the page raw (a script never sees one).
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'\u2028\u2029]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * JSON safe inside a `<script>` element: `<`, `>` and `&` (so no `</script>` or `<!--` can end or
 * change it) and the line separators U+2028 and U+2029 are written as `\u` escapes.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** An image's `data:` URL, or null when its type or payload could carry anything but base64 image bytes. */
export function imageDataUrl(mimeType: string, data: string): string | null {
  if (!/^image\/[a-z0-9.+-]+$/i.test(mimeType)) return null;
  const payload = data.replace(/[ \t\r\n]/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length === 0) return null;
  return `data:${mimeType.toLowerCase()};base64,${payload}`;
}

/** A Markdown code fence longer than any run of backticks in `text`, so the text cannot close it. */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return "`".repeat(Math.max(3, longest + 1));
}
