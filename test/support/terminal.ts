import { spawnSync } from "node:child_process";

/**
 * The code units of `text` a terminal would act on or lose, as `U+XXXX`: C0 controls (all of them,
 * or all but `\n` and `\t` with `layout`), DEL, C1, U+2028/U+2029, bidi embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069), lone surrogates, and with `decoded` (text decoded
 * from bytes) U+FFFD, what a lone surrogate becomes once encoded. Written apart from
 * `src/cli/terminal-text.ts`, so it checks it.
 */
export function unsafeCharacters(text: string, options: { layout?: boolean; decoded?: boolean } = {}): string[] {
  const found: string[] = [];
  const name = (c: number) => `U+${c.toString(16).padStart(4, "0")}`;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a pair: one astral character
        continue;
      }
    }
    const layout = options.layout === true && (c === 0x0a || c === 0x09);
    const control = c < 0x20 || (c >= 0x7f && c <= 0x9f);
    const separator = c === 0x2028 || c === 0x2029;
    const bidi = (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    const surrogate = c >= 0xd800 && c <= 0xdfff;
    const lost = options.decoded === true && c === 0xfffd;
    if ((control && !layout) || separator || bidi || surrogate || lost) found.push(name(c));
  }
  return found;
}

/**
 * Whether util-linux `script` (the pseudo-terminal the TTY tests run commands on) is installed. Without
 * it those tests skip with one loud line, except under `CI=true`, where its absence fails the run
 * (Debian's util-linux, which `.ci/run`'s machine always has, ships it).
 */
export function hasPseudoTerminal(): boolean {
  if (spawnSync("script", ["--version"]).status === 0) return true;
  if (process.env.CI === "true" || process.env.CI === "1")
    throw new Error("CI=true but util-linux `script` is missing: the TTY tests cannot run");
  console.warn("SKIPPED: util-linux `script` not found; the pseudo-terminal tests did not run");
  return false;
}
