import type { CliIo } from "./context.ts";

/**
 * Text bound for a terminal, made harmless. A transcript (its title, cwd, id, messages), a file
 * name or an error message may hold control characters that a terminal obeys: ESC and the 8-bit
 * CSI/OSC (U+009B, U+009D) start sequences that retitle the window, clear the screen, switch to
 * the alternate screen or write the clipboard (OSC 52); BEL, CR, backspace and DEL rewrite what
 * is shown; bidi embeddings, overrides and isolates reorder it; a lone surrogate is lost (it
 * encodes as U+FFFD). Each such character is shown as JSON would escape it (`\u001b`, `\n`,
 * `\ud800`), so what the terminal receives is printable and says what the transcript holds.
 * The visible form is for reading (a backslash is not escaped); `--json` keeps every value exact.
 *
 * Replaced: C0 (U+0000–U+001F), DEL, C1 (U+0080–U+009F), U+2028/U+2029, U+202A–U+202E,
 * U+2066–U+2069 and lone surrogates. A printer's own layout (`\n` between lines, `\t`) is kept by
 * `terminalLines`; a value placed in a line goes through `terminalSafe` so it stays on its line.
 */

/** JSON's short escapes, by code unit: backspace, tab, newline, form feed, carriage return. */
const SHORT: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };

/** The escape JSON.stringify would write for one UTF-16 code unit. */
function escapeUnit(unit: number): string {
  return SHORT[unit] ?? `\\u${unit.toString(16).padStart(4, "0")}`;
}

/** Anything but printable ASCII (and, for `terminalLines`, the layout): where the loop must look. */
const BEYOND_ASCII = /[^\x20-\x7e]/;
const BEYOND_ASCII_OR_LAYOUT = /[^\x20-\x7e\n\t]/;

/**
 * A RegExp search skips the printable ASCII (a 30 MiB export line of base64 costs about what its
 * encoding does), then one loop over the code units from there (a lone surrogate needs a look at
 * its neighbour).
 */
function escapeControls(text: string, keepLayout: boolean): string {
  const first = text.search(keepLayout ? BEYOND_ASCII_OR_LAYOUT : BEYOND_ASCII);
  if (first === -1) return text;
  let out = "";
  let from = 0;
  for (let i = first; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c < 0x20) {
      if (keepLayout && (c === 0x0a || c === 0x09)) continue;
    } else if (c >= 0xa0) {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          i++; // a pair: one astral character
          continue;
        }
      } else if (!(c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))) continue;
    }
    out += text.slice(from, i) + escapeUnit(c);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A value placed within a line (a title, a path, a message): every control made visible, `\n` and `\t` too. */
export function terminalSafe(value: unknown): string {
  return escapeControls(String(value), false);
}

/**
 * Text as a printer laid it out: every control made visible except its own `\n` and `\t`. Valid
 * JSON stays valid JSON of the same value (those characters can stand raw only inside strings,
 * where their `\u` escape means the same), so `--json` records go through it unchanged in meaning.
 */
export function terminalLines(text: string): string {
  return escapeControls(text, true);
}

/** A template whose literal text is the printer's layout and whose values go through `terminalSafe`. */
export function terminalText(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += terminalSafe(values[i]) + strings[i + 1]!;
  return out;
}

/**
 * The CLI's one writer: everything it prints to stdout and stderr passes `terminalLines`, so no
 * command (present or future) can put a raw control character on the terminal. Machine output
 * (`records`: `--json` records, the `export` stream) is data: it stays byte-exact on a pipe or in a
 * file, and passes `terminalLines` only when stdout is a terminal (the same JSON values, every
 * control character as its `\u` escape). `main` wraps the process streams with it before anything
 * runs; `scripts/check-terminal-output.mjs` fails the lint when code elsewhere writes to the process
 * streams or the console.
 */
export function terminalIo(io: CliIo): CliIo {
  const stdout = (text: string) => io.stdout(terminalLines(text));
  // search's matches, between « and », in bold red: the only escape sequence the writer itself adds, after escaping
  const stdoutMarked = (text: string) =>
    io.stdout(terminalLines(text).replaceAll("\u00ab", "\u001b[1;31m").replaceAll("\u00bb", "\u001b[0m"));
  return {
    ...io,
    stdout,
    stdoutMarked,
    stderr: (text) => io.stderr(terminalLines(text)),
    records: io.stdoutIsTTY === true ? stdout : io.stdout,
  };
}
