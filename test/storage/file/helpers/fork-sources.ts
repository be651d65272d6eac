// Source session files for the byte-copy fork tests: a clean one written by this store, and the
// damaged or unusual shapes a parse of the source would find (each a fixture of its own).
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "../../../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../../../src/session/session-options.ts";
import { makePng } from "../../../support/png.ts";

const HEADER = {
  type: "session",
  version: 3,
  id: "0190a5d2-0000-7000-8000-0000000000aa",
  timestamp: "2026-01-01T00:00:00.000Z",
  cwd: "/p",
};

/** A session this store wrote: text messages, an image (a blob ref on disk), a branch; its path. */
export async function cleanSource(root: string, options: SessionManagerOptions = {}): Promise<string> {
  const m = await SessionManager.create(join(root, "proj"), { root, ...options });
  const first = m.appendMessage({ role: "user", content: "hello" });
  m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi there" }] });
  m.appendMessage({ role: "user", content: [{ type: "image", data: makePng(40, 40, 3).toString("base64"), mimeType: "image/png" }] });
  m.branch(first);
  m.appendMessage({ role: "assistant", content: "another branch" });
  const path = m.sessionFile!;
  await m.close();
  return path;
}

/** A message entry line (with its newline). */
export function entryLine(id: string, parentId: string | null, text: string): string {
  const entry = { type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text } };
  return `${JSON.stringify(entry)}\n`;
}

/** The file's lines after its header (each with its newline). */
function bodyLines(path: string): string[] {
  const text = readFileSync(path, "utf8");
  return text.slice(text.indexOf("\n") + 1).split(/(?<=\n)/);
}

/** The id of the last entry line of the file. */
export function lastId(path: string): string {
  const lines = bodyLines(path);
  return JSON.parse(lines[lines.length - 1]!).id;
}

/** Inserts `text` after the first entry line of the file. */
function insertAfterFirstEntry(path: string, text: string): void {
  const text0 = readFileSync(path, "utf8");
  const firstEnd = text0.indexOf("\n", text0.indexOf("\n") + 1) + 1;
  writeFileSync(path, text0.slice(0, firstEnd) + text + text0.slice(firstEnd));
}

/** Shapes only a parse of the body finds: the copy is made, the fork settles them when first read. */
export const copiedDamage: Record<string, (path: string) => void> = {
  "a malformed line": (path) => insertAfterFirstEntry(path, "this is not json\n"),
  "an entry without id": (path) =>
    insertAfterFirstEntry(path, '{"type":"message","parentId":null,"message":{"role":"user","content":"x"}}\n'),
  "a repeated entry id": (path) => appendFileSync(path, entryLine(lastId(path), null, "same id again")),
  "records glued on one line": (path) => {
    const last = lastId(path);
    appendFileSync(path, `${entryLine("g1", last, "one").trimEnd()}${entryLine("g2", "g1", "two")}`);
  },
  "pretty-printed lines among many entries": (path) => {
    // Fewer fragments than records: not a pretty-printed file, two malformed lines (each > 8 bytes).
    appendFileSync(path, '        {\n        "x": 1 }\n');
  },
};

/** A v3 session another tool wrote with its images inline (a lazy read takes them out of memory). */
export function inlineImageSource(path: string): void {
  const image = makePng(48, 40, 7).toString("base64");
  const lines = [
    HEADER,
    {
      type: "message",
      id: "a1",
      parentId: null,
      timestamp: "t",
      message: { role: "user", content: [{ type: "image", data: image, mimeType: "image/png" }] },
    },
    { type: "message", id: "a2", parentId: "a1", timestamp: "t", message: { role: "assistant", content: "seen" } },
  ];
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

/** Shapes that only opening the source handles as today: no copy is kept, the open path forks. */
export const fallbackSources: Record<string, (path: string) => void> = {
  "a torn last line": (path) => appendFileSync(path, '{"type":"message","id":"torn","par'),
  "a last line without its newline": (path) => appendFileSync(path, entryLine("nl", lastId(path), "no newline").trimEnd()),
  "a run of NUL bytes": (path) => insertAfterFirstEntry(path, "\0\0\0\0\n"),
  "a short line (maybe a pretty-printed fragment)": (path) => appendFileSync(path, "{}\n"),
  "a legacy (v2) header": (path) => {
    const text = readFileSync(path, "utf8");
    const nl = text.indexOf("\n");
    writeFileSync(path, `${JSON.stringify({ ...JSON.parse(text.slice(0, nl)), version: 2 })}${text.slice(nl)}`);
  },
  "an omp title line before the header": (path) =>
    writeFileSync(path, `${JSON.stringify({ type: "title", title: "named" })}\n${readFileSync(path, "utf8")}`),
  "a blank line before the header": (path) => writeFileSync(path, `\n${readFileSync(path, "utf8")}`),
};

/** Sources today's forkFrom refuses, with the code it throws. */
export const refusedSources: Record<string, { write: (path: string) => void; code: string }> = {
  "no header": { write: (path) => writeFileSync(path, entryLine("x1", null, "no header here")), code: "BAD_HEADER" },
  "a pretty-printed file": {
    write: (path) =>
      writeFileSync(path, `${JSON.stringify(HEADER)}\n{\n  "type": "message",\n  "id": "p1",\n  "parentId": null,\n  "message": {}\n}\n`),
    code: "BAD_HEADER",
  },
  "an empty file": { write: (path) => writeFileSync(path, ""), code: "SESSION_NOT_FOUND" },
};
