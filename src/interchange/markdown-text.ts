/**
 * Values made safe for where they land in a Markdown view. A value (a tool name, a model, an id,
 * a path) is never Markdown: a line break in it would end its heading or the HTML block of a
 * `<summary>` and let the rest be read as Markdown or HTML (a remote image: a tracking pixel).
 */

/** Every character that ends a line in Markdown or in a reader (CR, LF, VT, FF, NEL, LS, PS) and the other C0/C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is taken out
const LINE_BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** `text` on one line: each run of line breaks and control characters becomes one space. */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAKS, " ");
}

/**
 * `text` as literal inline Markdown: on one line, every character that can open inline markup
 * backslash-escaped (CommonMark lets any ASCII punctuation be), so no emphasis, code, link, image,
 * HTML tag, entity, table cell or closing heading marker can form. (Block markers like `-` or `1.`
 * only count at a line's start, which a value never is.)
 */
export function markdownInline(text: string): string {
  return oneLine(text).replace(/[\\`*_[\]()!<>&#~|]/g, "\\$&");
}

/** `text` as an inline code span: on one line, fenced by more backticks than any run in it (padded when it starts or ends with one). */
export function markdownCode(text: string): string {
  const flat = oneLine(text);
  let longest = 0;
  for (const run of flat.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") || flat === "" ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}
