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

// As `\u` escapes in strings (the RegExp source), so this file holds no raw control character.
const BEYOND_C0 = "\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";
const LONE_SURROGATE = "[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";
const ANY_UNSAFE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]|${LONE_SURROGATE}`, "g");
/** The same without `\t` (U+0009) and `\n` (U+000A): the layout a printer writes itself. */
const UNSAFE_BUT_LAYOUT = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${BEYOND_C0}]|${LONE_SURROGATE}`, "g");

const SHORT: Record<string, string> = { "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" };

function escapeUnit(unit: string): string {
  return SHORT[unit] ?? `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** A value placed within a line (a title, a path, a message): every control made visible, `\n` and `\t` too. */
export function terminalSafe(value: unknown): string {
  const text = String(value);
  ANY_UNSAFE.lastIndex = 0;
  return ANY_UNSAFE.test(text) ? text.replace(ANY_UNSAFE, escapeUnit) : text;
}

/**
 * Text as a printer laid it out: every control made visible except its own `\n` and `\t`. Valid
 * JSON stays valid JSON of the same value (those characters can stand raw only inside strings,
 * where their `\u` escape means the same), so `--json` records go through it unchanged in meaning.
 */
export function terminalLines(text: string): string {
  UNSAFE_BUT_LAYOUT.lastIndex = 0;
  return UNSAFE_BUT_LAYOUT.test(text) ? text.replace(UNSAFE_BUT_LAYOUT, escapeUnit) : text;
}

/** A template whose literal text is the printer's layout and whose values go through `terminalSafe`. */
export function terminalText(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += terminalSafe(values[i]) + strings[i + 1]!;
  return out;
}

/**
 * The CLI's one writer: everything it prints to stdout and stderr passes `terminalLines`, so no
 * command (present or future) can put a raw control character on the terminal. `main` wraps the
 * process streams with it before anything runs; `scripts/check-terminal-output.mjs` fails the lint
 * when code elsewhere writes to the process streams or the console.
 */
export function terminalIo(io: CliIo): CliIo {
  return { ...io, stdout: (text) => io.stdout(terminalLines(text)), stderr: (text) => io.stderr(terminalLines(text)) };
}
