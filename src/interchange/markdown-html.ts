import { createRequire } from "node:module";
import type { Marked as MarkedClass } from "marked";
import { escapeHtml } from "./html-text.ts";
import { highlightCode } from "./code-highlight.ts";

/** A link target the viewer keeps: http(s), mailto, or a fragment; anything else (javascript:, data:) is text. */
export function safeHref(href: string): string | null {
  const trimmed = href.trim();
  if (/^#[\w-]*$/.test(trimmed)) return trimmed;
  try {
    const url = new URL(trimmed);
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:" ? url.href : null;
  } catch {
    return null;
  }
}

/** The Markdown parser, made on first use (the library import does not load `marked`). */
let marked: MarkedClass | null = null;

function parser(): MarkedClass {
  if (marked !== null) return marked;
  const { Marked } = createRequire(import.meta.url)("marked") as typeof import("marked");
  marked = new Marked({
    gfm: true,
    breaks: false,
    async: false,
    renderer: {
      // Raw HTML in a transcript is text: shown, never parsed.
      html: (html: string) => escapeHtml(html),
      code: (code: string, info: string | undefined) => {
        const lang = (info ?? "").trim().split(/\s+/)[0] ?? "";
        const label = lang === "" ? "" : ` data-lang="${escapeHtml(lang)}"`;
        return `<pre class="code"${label}><code>${highlightCode(code, lang)}</code></pre>\n`;
      },
      link: (href: string, title: string | null | undefined, text: string) => {
        const safe = safeHref(href);
        if (safe === null) return text;
        const t = title ? ` title="${escapeHtml(title)}"` : "";
        return `<a href="${escapeHtml(safe)}"${t} rel="noopener noreferrer nofollow" target="_blank">${text}</a>`;
      },
      // Images named in text are never fetched (a remote image is a tracking pixel): shown as their address.
      image: (href: string, _title: string | null, text: string) =>
        `<span class="md-image">[image: ${text === "" ? "" : `${text} `}${escapeHtml(href)}]</span>`,
    },
  });
  return marked;
}

/** Text longer than this is never parsed as Markdown (parsing costs more than it shows). @default 400000 */
export const MARKDOWN_MAX_CHARS = 400_000;

/**
 * Inline delimiters (emphasis, strike-through, table cells, links, code spans, quotes) one paragraph
 * may hold outside code fences before its Markdown is shown as plain text: past a few thousand the
 * parser's time grows with their square (40,000 characters of `**` took 19 s) or its recursion
 * exhausts the stack (quotes nested thousands deep). @default 1000
 */
export const MAX_DELIMITERS_PER_PARAGRAPH = 1000;
/** The same delimiters in the whole text (many paragraphs each just under the cap add up). @default 10000 */
export const MAX_DELIMITERS = 10_000;

/**
 * True when some paragraph (code fences left out) holds more than `MAX_DELIMITERS_PER_PARAGRAPH`
 * delimiters, or all of them more than `MAX_DELIMITERS`.
 */
export function tooTangled(text: string): boolean {
  let fence: string | null = null;
  let count = 0;
  let total = 0;
  for (const line of text.split("\n")) {
    // (a backtick fence's info string holds no backtick: "```a`" opens no fence, and its text is parsed)
    const opener = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
      continue;
    }
    if (opener !== undefined) {
      fence = opener;
      continue;
    }
    if (line.trim() === "") count = 0;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      // * _ ~ | [ ] ` < > and the backslash
      if (c === 42 || c === 95 || c === 126 || c === 124 || c === 91 || c === 93 || c === 96 || c === 60 || c === 62 || c === 92) {
        if (++count > MAX_DELIMITERS_PER_PARAGRAPH || ++total > MAX_DELIMITERS) return true;
      }
    }
  }
  return false;
}

/** Markdown text as safe HTML: raw HTML escaped, links filtered, images not loaded, code highlighted. */
export function markdownToHtml(text: string): string {
  // Very large or tangled texts are shown as preformatted text: parsing them costs more than it shows.
  const plain = () => `<pre class="plain">${escapeHtml(text)}</pre>`;
  if (text.length > MARKDOWN_MAX_CHARS || tooTangled(text)) return plain();
  let html: string;
  try {
    html = parser().parse(text) as string;
  } catch {
    return plain(); // a parser failure (its stack exhausted) costs the entry its formatting, never its page
  }
  // Line separators are written as references, as everywhere in a page (escapeHtml): none is in the page raw.
  return html.replace(/[\u2028\u2029]/g, (c) => `&#${c.charCodeAt(0)};`);
}
