/**
 * What a value in a secret's place looks like: the secret rules (`secret-rules.ts`) fire only on a
 * value that looks like a secret. An identifier, a property path, a file path, a model id or an
 * expression (a call, a template, a reference) never is, whatever name it is assigned to.
 */

/** Values that look assigned but are names, references or placeholders, not secrets. */
export const PLACEHOLDER = /^(?:\$|%|<|\{|\[|\*|`|@|x{3,}|\.{3})|(?:example|placeholder|changeme|your[_-]|dummy|redacted|xxxx|\.\.\.)/i;

/** A property path or member chain: `config.providers.openai4.defaultApiKey`, `process.env.X`, `a?.b`. */
const PROPERTY_PATH = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/;

/** A file path: home-, dot- or root-relative, or a relative path whose last part has an extension. */
const FILE_PATH = /^(?:~|\.{1,2})?\/|^[\w.-]+(?:\/[\w.-]+)*\/[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5}$/;

/** The runs a value splits into: words (`default`, `Api`, `KEY`) and digit runs. */
const PIECE = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/**
 * True when `value` reads as words, not noise: split at case changes, digits and punctuation, at
 * most one piece is not word-like (a lone letter, or letters without a vowel): `defaultApiKey`,
 * `id_ed25519_work2`, `Llama-3.1-8B-Instruct`. A random string of 20 characters almost always has
 * several (`Xk29fLq83mZ`: X, k, f, Lq, m, Z).
 */
export function wordy(value: string): boolean {
  let odd = 0;
  for (const piece of value.match(PIECE) ?? []) {
    if (piece.charCodeAt(0) <= 0x39) continue;
    if ((piece.length === 1 || !/[aeiouy]/i.test(piece)) && ++odd > 1) return false;
  }
  return true;
}

/**
 * A path or a model id with a `/` (`meta-llama/Llama-3.1-8B-Instruct`, `src/a-b/c.ts`): base64
 * holds `/` but never `.` or `-` beside it, and `//` (an OAuth refresh token) is no path part.
 */
const SLASHED_NAME = /^(?!.*\/\/)(?=.*[.-])[\w.-]+(?:\/[\w.-]+)+$/;

/** A reference, not a value: a property path, a file path, a model id or a placeholder. */
export function isReference(value: string): boolean {
  return PLACEHOLDER.test(value) || PROPERTY_PATH.test(value) || FILE_PATH.test(value) || SLASHED_NAME.test(value);
}

/**
 * A name (an identifier, a property path, a file path, a model id `org/Name-1.0`) rather than a
 * secret: a reference, or a value that reads as words with no character a name would not hold.
 */
export function isName(value: string): boolean {
  if (isReference(value)) return true;
  return /^[\w$./:@-]+$/.test(value) && wordy(value);
}

/** Shannon entropy of `text` in bits per character. */
export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A plausible random secret: mixed letters and digits, high entropy, not a name or a placeholder. */
export function randomLooking(secret: string, minEntropy: number): boolean {
  if (isName(secret)) return false;
  if (!/[0-9]/.test(secret) || !/[A-Za-z]/.test(secret)) return false;
  return shannonEntropy(secret) >= minEntropy;
}

/** Passwords that are literal placeholders or local defaults, kept by every password rule. */
const WEAK_PASSWORD =
  /^(?:pass(?:w(?:or)?d)?|pwd|secret|postgres|root|admin|user|test|guest|changeme|mysecretpassword|example|none|null|true|false|x+|\*+)$/i;

/**
 * A literal password where the context says a password stands (a connection string, a URL, an
 * environment variable of a client): at least `min` characters, not a placeholder, a reference
 * (`$PW`, `%PW%`, `{pw}`, `args.password`) or a local default (`postgres`).
 */
export function literalPassword(secret: string, min: number): boolean {
  if (secret.length < min || WEAK_PASSWORD.test(secret) || isReference(secret)) return false;
  return !/^(?:\$|%|\{)|\$\{|\$\(/.test(secret);
}
