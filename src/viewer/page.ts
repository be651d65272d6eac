import { escapeHtml as e } from "../interchange/html-text.ts";

/** The chrome of every served page: title, navigation, the stylesheet and script as files (the CSP allows no inline code). */
export function pageHtml(title: string, body: string, options: { redacted: boolean; write: boolean; live?: string }): string {
  const mode = [options.redacted ? "sharing view (redacted)" : "", options.write ? "write actions on" : "read-only"]
    .filter((x) => x !== "")
    .join(" · ");
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">' +
    `<title>${e(title)} · transcript-store</title><link rel="stylesheet" href="/static/viewer.css">` +
    `<script src="/static/viewer.js" defer></script></head>\n<body${options.live ? ` data-live="${e(options.live)}"` : ""}>\n` +
    '<a class="skip" href="#main">Skip to content</a>' +
    '<nav class="top" aria-label="Main"><a href="/" class="brand">transcript-store</a> <a href="/">Sessions</a> ' +
    '<a href="/usage">Usage &amp; space</a> <a href="/trash">Trash</a> <a href="/compare">Compare</a>' +
    `<span class="mode">${e(mode)}</span></nav>\n<main id="main">${body}</main>\n</body></html>\n`
  );
}

/** A money figure at one fixed precision (four decimals under a dollar, two above), or "unpriced". */
export function money(cost: number | null): string {
  if (cost === null) return "unpriced";
  return `$${cost.toFixed(Math.abs(cost) < 1 ? 4 : 2)}`;
}

/** Human bytes. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n;
  let i = -1;
  do {
    v /= 1024;
    i++;
  } while (v >= 1024 && i < units.length - 1);
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

/** A session's link: `/s/<id>`, the id percent-encoded (any character a header may hold). */
export function sessionHref(id: string, entry?: string): string {
  return `/s/${encodeURIComponent(id)}${entry === undefined ? "" : `#${encodeURIComponent(entry)}`}`;
}

/** A horizontal bar chart as inline SVG (no script, no external resource): one labelled bar per row. */
export function barChart(title: string, rows: Array<{ label: string; value: number; text: string }>): string {
  const max = Math.max(1e-12, ...rows.map((r) => r.value));
  const rowHeight = 22;
  const height = rows.length * rowHeight + 8;
  // the picture is as wide as its longest value text needs after the longest bar (12px text: under 7.5px a character)
  const width = Math.max(820, Math.ceil(336 + 380 + 8 + Math.max(0, ...rows.map((r) => r.text.length)) * 7.5));
  const bars = rows
    .map((r, i) => {
      const w = Math.max(1, Math.round((r.value / max) * 380));
      const y = i * rowHeight + 4;
      return (
        `<text x="0" y="${y + 14}" class="chart-label">${e(r.label.length > 48 ? `…${r.label.slice(-47)}` : r.label)}</text>` +
        `<rect x="330" y="${y}" width="${w}" height="16" class="chart-bar"><title>${e(`${r.label}: ${r.text}`)}</title></rect>` +
        `<text x="${336 + w}" y="${y + 13}" class="chart-value">${e(r.text)}</text>`
      );
    })
    .join("");
  return (
    `<figure class="chart"><figcaption>${e(title)}</figcaption>` +
    `<svg role="img" aria-label="${e(title)}" viewBox="0 0 ${width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet">` +
    `${bars}</svg></figure>`
  );
}
