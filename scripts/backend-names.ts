#!/usr/bin/env node
/**
 * The storage seam's rule (docs/architecture.md, "Capabilities"): nothing outside a backend's own
 * folder (`src/storage/<backend>/`) and the registry names that backend: not its classes, not its
 * kind string, not its URL schemes, and no import of its folder. A service asks the backend what it
 * `supports`; the registry (storage/builtin-backends.ts) is the one line that knows each backend.
 * `npm run check` runs this file; test/architecture/backend-names.test.ts runs it against planted
 * violations. Usage: node scripts/backend-names.ts [root]. Exit 1 on a violation.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Violation, formatViolation, importsOf, readImportGraph, stripComments } from "./import-rules.ts";

/** Files that may name every backend: the registry, and the package's entry (it re-exports the public classes). */
export const REGISTRY = [
  "src/storage/backend-registry.ts",
  "src/storage/builtin-backends.ts",
  "src/storage/backends.ts", // the default backend (the file tree) when no store is given
  "src/index.ts", // the package's entry: re-exports only
];

/**
 * Folders a backend owns besides `src/storage/<backend>/`, until they move into it
 * (the rename script of issue 33 moves `src/storage/postgres/db/` to `src/storage/postgres/db/`).
 */
export const EXTRA_FOLDERS: Record<string, string[]> = {};

export interface Backend {
  name: string;
  folders: string[];
  /** Classes and `…Backend` values it exports. */
  identifiers: string[];
  /** Its `kind` strings. */
  kinds: string[];
  schemes: string[];
}

function filesUnder(root: string, dir: string): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(root, `${dir}${e.name}/`) : e.name.endsWith(".ts") ? [`${dir}${e.name}`] : [],
  );
}

/** Each folder of `src/storage/` is a backend: what it declares, read from its sources. */
export function backendsOf(root: string, extra: Record<string, string[]> = EXTRA_FOLDERS): Backend[] {
  const dir = join(root, "src/storage");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => {
      const folders = [`src/storage/${e.name}/`, ...(extra[e.name] ?? [])];
      const identifiers = new Set<string>();
      const kinds = new Set<string>();
      const schemes = new Set<string>();
      for (const file of filesUnder(root, folders[0]!)) {
        const text = stripComments(readFileSync(join(root, file), "utf8"));
        for (const m of text.matchAll(/\bexport\s+(?:abstract\s+)?class\s+([\w$]+)/g)) identifiers.add(m[1]!);
        for (const m of text.matchAll(/\bexport\s+const\s+([\w$]+Backend)\b/g)) identifiers.add(m[1]!);
        for (const m of text.matchAll(/\bkind\s*[:=]\s*["']([^"']+)["']/g)) if (/backend/i.test(file)) kinds.add(m[1]!);
        for (const m of text.matchAll(/\bschemes\s*:\s*\[([^\]]*)\]/g))
          for (const s of m[1]!.matchAll(/["']([^"']+)["']/g)) schemes.add(s[1]!.toLowerCase());
      }
      return { name: e.name, folders, identifiers: [...identifiers], kinds: [...kinds], schemes: [...schemes] };
    });
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

const reEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Every place outside a backend's folders (and the registry) that names it, in file and line order. */
export function checkBackendNames(root: string, registry: string[] = REGISTRY): Violation[] {
  const backends = backendsOf(root);
  const { files } = readImportGraph(root);
  const out: Violation[] = [];
  for (const file of files) {
    if (registry.includes(file)) continue;
    const source = readFileSync(join(root, file), "utf8");
    const text = stripComments(source);
    for (const b of backends) {
      if (b.folders.some((f) => file.startsWith(f))) continue;
      const say = (index: number, what: string) =>
        out.push({
          rule: "layer",
          file,
          line: lineAt(text, index),
          message:
            `names the ${b.name} backend (${what}) outside ${b.folders.join(", ")} and the registry: ` +
            "ask the backend what it supports (storage/capabilities.ts)",
        });
      for (const imp of importsOf(file, source)) {
        if (b.folders.some((f) => imp.target.startsWith(f))) {
          out.push({
            rule: "layer",
            file,
            line: imp.line,
            message: `imports ${imp.target}, inside the ${b.name} backend: import the seam (src/storage/*.ts), never a backend`,
          });
        }
      }
      for (const id of b.identifiers)
        for (const m of text.matchAll(new RegExp(`(?<![\\w$])${reEscape(id)}(?![\\w$])`, "g"))) say(m.index, id);
      for (const scheme of b.schemes) {
        for (const m of text.matchAll(new RegExp(`(["'\`])${reEscape(scheme)}\\1|${reEscape(scheme)}://`, "gi")))
          say(m.index, `the scheme ${scheme}`);
      }
      for (const kind of b.kinds) {
        const k = reEscape(kind);
        const before = `\\.\\s*(?:kind|store)\\s*[!=]==?\\s*(["'\`])${k}\\1`;
        const after = `(["'\`])${k}\\2\\s*[!=]==?\\s*[\\w$.]*\\.(?:kind|store)\\b`;
        const compared = new RegExp(`${before}|${after}`, "g");
        for (const m of text.matchAll(compared)) say(m.index, `its kind "${kind}"`);
      }
    }
  }
  // an import names a backend once, not once per pattern
  const seen = new Set<string>();
  return out
    .filter((v) => {
      const key = `${v.file}:${v.line}:${v.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = process.argv[2] ?? process.cwd();
  const violations = checkBackendNames(root);
  for (const v of violations) console.error(formatViolation(v));
  if (violations.length > 0) {
    console.error(`${violations.length} place(s) name a backend outside its folder (docs/architecture.md, "Capabilities")`);
    process.exit(1);
  }
  console.log(`backend names: ${backendsOf(root).length} backends, named only in their folders and the registry`);
}
