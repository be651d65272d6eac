const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * Splits a line that is several JSON objects written back to back (`{…}{…}`, as a writer that lost
 * a newline leaves them) into the objects' texts. Returns null unless the line is exactly two or
 * more top-level objects with only whitespace between them. One linear pass that tracks string and
 * escape state and bracket depth; it does not validate the objects (the caller parses each).
 */
export function splitGluedObjects(text: string): string[] | null {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (depth === 0) {
      if (isJsonWhitespace(c)) continue;
      if (c !== OPEN_BRACE) return null;
      start = i;
      depth = 1;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) parts.push(text.slice(start, i + 1));
    }
  }
  if (depth !== 0 || parts.length < 2) return null;
  return parts;
}
