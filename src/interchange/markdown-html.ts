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

/** Markdown text as safe HTML: raw HTML escaped, links filtered, images not loaded, code highlighted. */
export function markdownToHtml(text: string): string {
  // Very large texts are shown as preformatted text: parsing them costs more than it shows.
  if (text.length > 400_000) return `<pre class="plain">${escapeHtml(text)}</pre>`;
  // Line separators are written as references, as everywhere in a page (escapeHtml): none is in the page raw.
  return (parser().parse(text) as string).replace(/[\u2028\u2029]/g, (c) => `&#${c.charCodeAt(0)};`);
}
