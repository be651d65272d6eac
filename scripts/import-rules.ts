#!/usr/bin/env node
/**
 * The architecture's rules over the import graph of `src/` (docs/architecture.md, "Rules"): which layer
 * may import which, who may call the writers of session and quarantine files, which packages load
 * where, and no runtime import cycles. `npm run check` runs this file (Node strips the types);
 * `test/architecture/import-rules.test.ts` runs it in the suite and against seeded violations.
 * Usage: node scripts/import-rules.ts [root] (default: the current directory). Exit 1 on a violation.
 *
 * A layer is a folder or a file of `src/`; the longest matching path wins. Every folder has a row in
 * LAYERS (scripts/layers.ts) naming exactly what it may import, type-only imports included, and only
 * rows below it: so no two layers import each other.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

import { type Layer, LAYERS, PURE_BUILTINS } from "./layers.ts";

export { type Layer, LAYERS, PURE_BUILTINS };

/** Packages only some layers may import (the library must load without the CLI's dependencies or the driver). */
export const PACKAGES: Record<string, string[]> = {
  "cli-progress": ["cli"],
  ndjson: ["cli"],
  "fast-glob": ["cli"],
  pg: ["database"],
  "tar-stream": ["bundle"],
  "proper-lockfile": ["session", "blob"],
  "@earendil-works/pi-coding-agent": ["pi"],
  "@modelcontextprotocol/sdk": ["mcp"],
  zod: ["mcp"],
  marked: ["interchange"],
};

export interface Writer {
  /** The module holding the writing primitives. */
  module: string;
  /** Its exports that write (`"*"`: all of them). A type-only import of them is free. */
  exports: string[] | "*";
  /** The files they write. */
  writes: string;
  /** The modules that may import those exports at run time (docs/architecture.md, "Who writes which file"). */
  importers: string[];
}

/** Who may call the writers of session files and quarantine files. */
export const WRITERS: Writer[] = [
  {
    module: "src/session/session-file.ts",
    exports: ["SessionFile", "SessionFileDraft", "writeSessionFileAtomic", "renameIntoPlace", "backupSessionFile"],
    writes: "session files (<stem>.jsonl) and their quarantine files",
    importers: [
      "src/storage/file/file-start.ts", // the file backend: create and open (append, repair, rewrite)
      "src/storage/file/file-import.ts", // the file backend's import of a session snapshot (the storage seam, issue 23)
      "src/session/session-move.ts", // a move's draft of the renamed file
      "src/session/giant-lines.ts", // the rewrite after a giant image line went to the blob store
      "src/maintenance/migrate-file.ts", // migrate: rewrite as v3, --backup
      "src/maintenance/inline-images.ts", // inline-images: its rewrite (once it goes through writeSessionFileAtomic)
      "src/maintenance/rekey.ts", // rekey: an encrypted session re-encrypted under another key (temp + rename)
      "src/maintenance/encrypt-file.ts", // encrypt / decrypt: a session file written again sealed or in clear (temp + rename)
      "src/pi/session-disk.ts", // the pi adapter's synchronous session
    ],
  },
  {
    module: "src/session/quarantine-record.ts",
    exports: ["writeStreamedRecord"],
    writes: "quarantine records streamed into an open quarantine file",
    importers: ["src/session/session-file.ts"],
  },
];

/**
 * Every module that writes files with the raw primitives (`io.writeSync`, `io.renameSync`, …, `writeFully`,
 * `writeTempFile`, `writeFileAtomic` of io.ts, or node:fs's own writers), and what it writes
 * (docs/architecture.md, "Who writes which file"). A session or quarantine file is written by
 * src/session/session-file.ts; the rows marked "session file" elsewhere are the exceptions still left.
 * Only modules of listed layers are held to it (a new folder is not, until it has a row in LAYERS).
 */
export const RAW_WRITERS: Record<string, string> = {
  "src/io.ts": "the seam's own helpers (temp file + rename)",
  "src/io-exclusive.ts": "the seam's never-replace creators (exclusive create, link or rename publish)",
  "src/session/session-file.ts": "session files and their quarantine files (append, repair, rewrite, drafts, backups)",
  "src/session/quarantine-record.ts": "quarantine records, into the file session-file.ts opened",
  "src/session/session-lock.ts": "the lock declaration <stem>.jsonl.lock.json",
  "src/session/no-follow.ts": "move journals (<stem>.move.json, .move-in.json) for move-journal.ts",
  "src/session/session-move.ts": "a move: renames or copies the session file, its quarantine file and artifacts directory",
  "src/session/artifact-dir-copy.ts": "a fork's or move's copy of an artifacts directory (links or copies)",
  "src/session/giant-lines.ts": "session file: the rewrite after a giant image line went to the blob store (temp + rename)",
  "src/blob/blob-store.ts": "blobs <blobsDir>/<sha256>",
  "src/search/index-ownership.ts": "an empty index file claimed 0600 before SQLite opens it (exclusive create)",
  "src/blob/blob-referrers.ts": "<blobsDir>/.referrers.jsonl",
  "src/blob/proof-log.ts": "<blobsDir>/.proven, the proof log (O_APPEND lines, compacted by temp + rename)",
  "src/artifacts/artifact-files.ts": "artifact files (exclusive temp, link or rename publish)",
  "src/artifacts/artifact-writer.ts": "an artifact's content as it streams",
  "src/artifacts/artifact-store.ts": "artifact metadata (temp + rename)",
  "src/artifacts/artifact-ids.ts": "artifact metadata and tombstones (temp + rename)",
  "src/artifacts/agent-outputs.ts": "agent outputs <id>.md (temp + rename)",
  "src/artifacts/artifact-reseal.ts": "an encrypted fork's or rekey's artifact files sealed again (temp + rename)",
  "src/lifecycle/prune-log.ts": "<root>/prune-log.jsonl: one appended line per prune (restore --last-prune)",
  "src/session/store-settings.ts": "<root>/config.json: the encrypt and redact settings (temp + rename)",
  "src/maintenance/encrypt-file.ts": "encrypt / decrypt: a session's artifact files sealed or opened (temp + rename)",
  "src/storage/file/file-import.ts": "an imported session's artifact files, never replacing one (writeNew)",
  "src/maintenance/usage-ledger-file.ts": "the usage ledger <root>/usage-ledger.jsonl (append)",
  "src/lifecycle/lifecycle-log.ts": "the lifecycle log <root>/lifecycle.jsonl (appended records)",
  "src/lifecycle/file-trash.ts": "a trash entry's journal under <root>/trash/<id>/ (temp + rename); the session's files are renamed in",
  "src/crypto/redaction-key.ts": "the store's redaction key <root>/redaction.key (exclusive temp, link publish, mode 0600)",
  "src/maintenance/gc.ts": "gc: blobs moved aside and back (trash renames)",
  "src/maintenance/late-appends.ts": "session file: migrate copies lines appended during the rewrite to the new file",
  "src/maintenance/inline-images.ts": "session file: inline-images rewrites it (temp + rename)",
  "src/storage/postgres/pg-artifacts.ts": "artifact files of a PostgreSQL session's working directory",
  "src/cli/commands/demo.ts": "the demo's copies of the bundled fixtures",
  "src/bundle/bundle-spool.ts": "an unbundle's spool directory (<root>/.unbundle-*.tmp), removed after",
  "src/cli/output-file.ts":
    "export -o, bundle -o and redact --store --backup: a new output file (temp beside it, published only if the name is free)",
};

const IO_WRITERS = /\bio\s*\.\s*(writeSync|ftruncateSync|truncateSync|renameSync|linkSync|copyFileSync|appendFileSync|writeFileSync)\s*\(/g;
/** The seam's writing helpers, by module: importing one is writing. */
const IO_HELPERS: Record<string, string[]> = {
  "src/io.ts": ["writeFully", "writeTempFile", "writeFileAtomic"],
  "src/io-exclusive.ts": ["createExclusive", "publishNew", "writeNew", "copyNew"],
};
const FS_WRITERS = [
  "writeFileSync",
  "appendFileSync",
  "writeSync",
  "ftruncateSync",
  "truncateSync",
  "renameSync",
  "linkSync",
  "copyFileSync",
  "createWriteStream",
  "writeFile",
  "appendFile",
  "rename",
  "copyFile",
];

/** The raw write primitives a file uses: [line, name] pairs (from its source and its imports). */
export function rawWritesOf(file: string, source: string, imports: Import[]): Array<[number, string]> {
  const text = stripComments(source);
  const found: Array<[number, string]> = [];
  for (const m of text.matchAll(IO_WRITERS)) found.push([lineAt(text, m.index), `io.${m[1]}`]);
  for (const imp of imports) {
    if (imp.from !== file || imp.typeOnly) continue;
    const names = imp.names === "*" ? ["*"] : imp.names;
    const fs = imp.specifier === "node:fs" || imp.specifier === "node:fs/promises";
    const helpers = IO_HELPERS[imp.target];
    if (helpers !== undefined) {
      for (const n of names) if (helpers.includes(n) || n === "*") found.push([imp.line, n]);
    } else if (fs && names.includes("*")) {
      const ns = /import\s+\*\s+as\s+([\w$]+)\s+from\s*["']node:fs(?:\/promises)?["']/.exec(text)?.[1];
      if (ns === undefined) continue;
      for (const m of text.matchAll(new RegExp(`\\b${ns}\\s*\\.\\s*(${FS_WRITERS.join("|")})\\s*\\(`, "g")))
        found.push([lineAt(text, m.index), `${ns}.${m[1]}`]);
    } else if (fs) {
      for (const n of names) if (FS_WRITERS.includes(n)) found.push([imp.line, n]);
    }
  }
  return found.sort((a, b) => a[0] - b[0]);
}

function rawWriterRules(
  root: string,
  files: string[],
  imports: Import[],
  layers: Layer[],
  rawWriters: Record<string, string>,
): Violation[] {
  const out: Violation[] = [];
  const listed = new Set(layers.map((l) => l.name));
  for (const file of files) {
    if (rawWriters[file] !== undefined || !listed.has(layerOf(file, layers).name)) continue;
    const writes = rawWritesOf(file, readFileSync(join(root, file), "utf8"), imports);
    if (writes.length === 0) continue;
    const [line, name] = writes[0]!;
    out.push({
      rule: "writer",
      file,
      line,
      message:
        `writes files (${name}) but has no row in RAW_WRITERS (scripts/import-rules.ts): add one saying what it writes, ` +
        `as docs/architecture.md "Who writes which file" does; a session or quarantine file goes through src/session/session-file.ts`,
    });
  }
  return out;
}

/**
 * Runtime import cycles tolerated for now, each a set of files. A listed cycle that no longer exists is
 * a violation too (remove its row).
 */
export const ALLOWED_CYCLES: string[][] = [];

export interface Import {
  /** The importing file, relative to the root (posix separators). */
  from: string;
  line: number;
  specifier: string;
  /** A file of the root for a relative specifier (`.ts` as written), else the package or built-in name. */
  target: string;
  kind: "static" | "dynamic";
  /** Erased at compile time (`import type`, `export type`, `import("…").T` in a type). */
  typeOnly: boolean;
  /** The names imported at run time (`"*"`: the whole module). */
  names: string[] | "*";
}

export interface Violation {
  rule: "layer" | "pure" | "package" | "writer" | "cycle";
  file: string;
  line: number;
  message: string;
}

/** Blanks comments (keeping line breaks), so that commented-out imports and `//` in strings are told apart. */
export function stripComments(text: string): string {
  let out = "";
  let i = 0;
  let lastSignificant = "";
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      lastSignificant = c;
      continue;
    }
    if (c === "/" && (lastSignificant === "" || "(,=:[!&|?{};+-*%<>~^".includes(lastSignificant))) {
      // a regular expression literal: skip to its closing slash (outside a character class)
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== "\n") {
        const d = text[j]!;
        if (d === "\\") j++;
        else if (d === "[") inClass = true;
        else if (d === "]") inClass = false;
        else if (d === "/" && !inClass) break;
        j++;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
      lastSignificant = "/";
      continue;
    }
    if (!/\s/.test(c)) lastSignificant = /[\w$)\]]/.test(c) ? "a" : c;
    out += c;
    i++;
  }
  return out;
}

const STATIC_IMPORT = /(?<=^|[;}\n])[ \t]*import\s+(type\s+)?([\w$*{}\s,]+?)\s+from\s*(["'])([^"'\n]+)\3/g;
const SIDE_EFFECT_IMPORT = /(?<=^|[;}\n])[ \t]*import\s*(["'])([^"'\n]+)\1/g;
const STATIC_EXPORT = /(?<=^|[;}\n])[ \t]*export\s+(type\s+)?(\*(?:\s+as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(["'])([^"'\n]+)\3/g;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)(\s*\.\s*[\w$]+)?/g;

/** The names a clause (`a, { b, type c, d as e }`, `* as ns`, `{ x }`) brings in at run time. */
function runtimeNames(clause: string): string[] | "*" {
  const trimmed = clause.trim();
  if (trimmed.startsWith("*")) return "*";
  const names: string[] = [];
  const braces = /\{([^}]*)\}/.exec(trimmed);
  const outside = trimmed
    .replace(/\{[^}]*\}/, "")
    .replace(/,/g, " ")
    .trim();
  if (outside.length > 0) names.push("default");
  for (const part of (braces?.[1] ?? "").split(",")) {
    const name = part.trim();
    if (name.length === 0 || /^type\s/.test(name)) continue;
    names.push(name.split(/\s+as\s+/)[0]!.trim());
  }
  return names;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function targetOf(from: string, specifier: string): string {
  if (!specifier.startsWith(".")) return specifier;
  return posix.normalize(posix.join(posix.dirname(from), specifier));
}

/** The imports of one TypeScript file (`file` relative to the root, posix separators). */
export function importsOf(file: string, source: string): Import[] {
  const text = stripComments(source);
  const found: Import[] = [];
  const add = (index: number, specifier: string, kind: Import["kind"], typeOnly: boolean, names: Import["names"]) => {
    // the match may start at the line break before the statement
    const at = text[index] === "\n" ? index + 1 : index;
    found.push({ from: file, line: lineAt(text, at), specifier, target: targetOf(file, specifier), kind, typeOnly, names });
  };
  for (const m of text.matchAll(STATIC_IMPORT)) add(m.index, m[4]!, "static", m[1] !== undefined, m[1] ? [] : runtimeNames(m[2]!));
  for (const m of text.matchAll(SIDE_EFFECT_IMPORT)) add(m.index, m[2]!, "static", false, []);
  for (const m of text.matchAll(STATIC_EXPORT)) add(m.index, m[4]!, "static", m[1] !== undefined, m[1] ? [] : runtimeNames(m[2]!));
  for (const m of text.matchAll(DYNAMIC_IMPORT)) {
    // `import("./x.ts").Name` in a type position is erased; `import("./x.ts").then(…)` runs
    const member = m[3]?.replace(/[\s.]/g, "");
    const typeOnly = member !== undefined && !["then", "catch", "finally"].includes(member);
    add(m.index, m[2]!, "dynamic", typeOnly, typeOnly ? [] : "*");
  }
  return found.sort((a, b) => a.line - b.line);
}

function sourceFiles(root: string, dir: string): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(root, `${dir}/${e.name}`) : [`${dir}/${e.name}`]))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .sort();
}

/** Every import of every `.ts` file under `<root>/src`. */
export function readImportGraph(root: string): { files: string[]; imports: Import[] } {
  const files = sourceFiles(root, "src");
  const imports = files.flatMap((f) => importsOf(f, readFileSync(join(root, f), "utf8")));
  return { files, imports };
}

/** The layer a file belongs to: the row with the longest matching path; a folder without a row is its own library layer. */
export function layerOf(file: string, layers: Layer[] = LAYERS): Layer {
  let best: Layer | null = null;
  let bestLength = -1;
  for (const layer of layers) {
    for (const path of layer.paths) {
      const matches = path.endsWith("/") ? file.startsWith(path) : path.endsWith("*") ? file.startsWith(path.slice(0, -1)) : file === path;
      if (matches && path.length > bestLength) {
        best = layer;
        bestLength = path.length;
      }
    }
  }
  if (best !== null) return best;
  const folder = file.split("/").slice(0, -1).join("/");
  return { name: `${folder}/ (no row)`, paths: [`${folder}/`], owns: "a folder without a row in LAYERS", mayImport: [] };
}

function mayImport(from: Layer, to: Layer, typeOnly: boolean): boolean {
  if (from.name === to.name) return true;
  return from.mayImport.includes(to.name) && (typeOnly || !(from.typesOnly ?? []).includes(to.name));
}

/**
 * The table itself: every file of `src/` in a row, every name a row imports a row, and only rows
 * listed below it (so the layers form no cycle, type-only imports included).
 */
export function rowRules(files: string[], layers: Layer[]): Violation[] {
  const out: Violation[] = [];
  const index = new Map(layers.map((l, i) => [l.name, i]));
  const unlisted = new Set<string>();
  for (const file of files) {
    if (
      layers.some((l) =>
        l.paths.some((p) => (p.endsWith("/") ? file.startsWith(p) : p.endsWith("*") ? file.startsWith(p.slice(0, -1)) : file === p)),
      )
    )
      continue;
    const folder = file.split("/").slice(0, -1).join("/");
    if (unlisted.has(folder)) continue;
    unlisted.add(folder);
    out.push({
      rule: "layer",
      file,
      line: 1,
      message: `${folder}/ has no row in LAYERS (scripts/layers.ts): add one naming exactly what it may import`,
    });
  }
  for (const layer of layers) {
    for (const name of layer.mayImport) {
      const at = index.get(name);
      if (at === undefined || at >= index.get(layer.name)!) {
        out.push({
          rule: "cycle",
          file: "scripts/layers.ts",
          line: 1,
          message:
            at === undefined
              ? `${layer.name} may import ${name}, which has no row`
              : `${layer.name} may import ${name}, which is not below it in LAYERS: two layers could import each other`,
        });
      }
    }
  }
  return out;
}

function layerRules(imports: Import[], layers: Layer[]): Violation[] {
  const out: Violation[] = [];
  for (const imp of imports) {
    const from = layerOf(imp.from, layers);
    const where = { file: imp.from, line: imp.line };
    if (imp.specifier.startsWith(".")) {
      // type-only imports too: a layer that names another's types depends on it
      const to = layerOf(imp.target, layers);
      if (!mayImport(from, to, imp.typeOnly)) {
        const allowed = from.mayImport.map((n) => ((from.typesOnly ?? []).includes(n) ? `${n} (types only)` : n)).join(", ") || "nothing";
        const kind = imp.typeOnly ? " (type-only included)" : "";
        out.push({
          rule: "layer",
          ...where,
          message: `${from.name} (${from.owns}) may not import ${to.name} (${imp.target})${kind}; it may import: ${allowed}`,
        });
      }
      continue;
    }
    if (imp.typeOnly) continue;
    if (imp.specifier.startsWith("node:") || !imp.specifier.includes("/")) {
      const builtin = imp.specifier.startsWith("node:") ? imp.specifier : null;
      if (builtin !== null && from.builtins !== undefined && !from.builtins.includes(builtin)) {
        out.push({
          rule: from.pure ? "pure" : "layer",
          ...where,
          message: `${from.name} (${from.owns}) may not import ${builtin} (its Node built-ins: ${from.builtins.join(", ")})`,
        });
      }
    }
    const pkg = packageName(imp.specifier);
    const owners = pkg === null ? undefined : PACKAGES[pkg];
    if (owners !== undefined && !owners.includes(from.name)) {
      out.push({ rule: "package", ...where, message: `only ${owners.join(", ")} may import the package ${pkg} (${from.name} does)` });
    } else if (pkg !== null && owners === undefined && from.pure) {
      out.push({ rule: "pure", ...where, message: `${from.name} is pure (${from.owns}): it may not import the package ${pkg}` });
    }
  }
  return out;
}

function packageName(specifier: string): string | null {
  if (specifier.startsWith(".") || specifier.startsWith("node:")) return null;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

function writerRules(imports: Import[], writers: Writer[]): Violation[] {
  const out: Violation[] = [];
  for (const writer of writers) {
    for (const imp of imports) {
      if (imp.typeOnly || imp.target !== writer.module || writer.importers.includes(imp.from)) continue;
      const taken = imp.names === "*" ? writer.exports : imp.names.filter((n) => writer.exports === "*" || writer.exports.includes(n));
      if (taken.length === 0 && imp.names !== "*") continue;
      out.push({
        rule: "writer",
        file: imp.from,
        line: imp.line,
        message:
          `imports ${taken === "*" ? "all of" : taken.join(", ")} from ${writer.module}, which writes ${writer.writes}: ` +
          `only ${writer.importers.join(", ")} may (WRITERS in scripts/import-rules.ts; docs/architecture.md "Who writes which file")`,
      });
    }
  }
  return out;
}

/** The strongly connected components of more than one file (or a file importing itself), each sorted. */
export function cyclesOf(files: string[], edges: Array<[string, string]>): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const [a, b] of edges) next.get(a)?.push(b);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

const BREAK_CYCLE = "break it with an `import type`, or move what both need into a lower module";

/** The shortest import path from `start` back to itself through the files of its cycle: [start, …, start]. */
function shortestCycle(start: string, within: Set<string>, imports: Import[]): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const imp of imports) {
      if (imp.from !== at || !within.has(imp.target)) continue;
      if (imp.target === start) {
        const between: string[] = [];
        for (let back = at; back !== start; back = cameFrom.get(back)!) between.unshift(back);
        return [start, ...between, start];
      }
      if (!cameFrom.has(imp.target) && imp.target !== start) {
        cameFrom.set(imp.target, at);
        queue.push(imp.target);
      }
    }
  }
  return [start, start];
}

function cycleRules(files: string[], imports: Import[], allowed: string[][]): Violation[] {
  // Static runtime imports only: a type-only import is erased, and a dynamic import() runs after every
  // module it reaches has been evaluated, so it cannot see a half-initialised module.
  const runtime = imports.filter((i) => !i.typeOnly && i.kind === "static" && files.includes(i.target));
  const edges = runtime.map((i): [string, string] => [i.from, i.target]);
  const same = (a: string[], b: string[]) => a.length === b.length && [...a].sort().every((f, i) => f === [...b].sort()[i]);
  const out: Violation[] = [];
  const cycles = cyclesOf(files, edges);
  for (const cycle of cycles) {
    if (allowed.some((a) => same(a, cycle))) continue;
    const path = shortestCycle(cycle[0]!, new Set(cycle), runtime);
    const first = runtime.find((i) => i.from === path[0] && i.target === path[1])!;
    const more = cycle.length > path.length - 1 ? ` (one of ${cycle.length} files importing each other)` : "";
    out.push({
      rule: "cycle",
      file: first.from,
      line: first.line,
      message: `runtime import cycle: ${path.join(" → ")}${more}; ${BREAK_CYCLE}`,
    });
  }
  for (const a of allowed) {
    // a tree without any of its files (a seeded test tree) has nothing to say about it
    if (cycles.some((c) => same(a, c)) || !a.some((f) => files.includes(f))) continue;
    out.push({
      rule: "cycle",
      file: a[0]!,
      line: 1,
      message: `ALLOWED_CYCLES lists ${a.join(" ↔ ")}, which is no longer a cycle: remove its row from scripts/import-rules.ts`,
    });
  }
  return out;
}

export interface RuleSet {
  layers: Layer[];
  writers: Writer[];
  allowedCycles: string[][];
  /** @default RAW_WRITERS */
  rawWriters?: Record<string, string>;
}

/** Every violation of the rules in the tree at `root`, in file and line order. */
export function checkImportRules(
  root: string,
  rules: RuleSet = { layers: LAYERS, writers: WRITERS, allowedCycles: ALLOWED_CYCLES },
): Violation[] {
  const { files, imports } = readImportGraph(root);
  const violations = [
    ...rowRules(files, rules.layers),
    ...layerRules(imports, rules.layers),
    ...writerRules(imports, rules.writers),
    ...rawWriterRules(root, files, imports, rules.layers, rules.rawWriters ?? RAW_WRITERS),
    ...cycleRules(files, imports, rules.allowedCycles),
  ];
  return violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

export function formatViolation(v: Violation): string {
  return `${v.file}:${v.line}: [${v.rule}] ${v.message}`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = process.argv[2] ?? process.cwd();
  const violations = checkImportRules(root);
  for (const v of violations) console.error(formatViolation(v));
  if (violations.length > 0) {
    console.error(`${violations.length} import rule violation(s) (docs/architecture.md, "Rules")`);
    process.exit(1);
  }
  const count = readImportGraph(root).files.length;
  console.log(`import rules: ${count} files of src/ follow them`);
}
