import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { PostgresBackend } from "../../../src/storage/postgres/pg-backend.ts";
import { PgStore, type PgEntry } from "../../../src/storage/postgres/db/index.ts";
import { freshDatabase } from "../../support/postgres.ts";
import { onLines, spawnTs } from "../../support/child.ts";

const CHILD = join(import.meta.dirname, "pg-writer-child.ts");

const started: ChildProcess[] = [];

// No writer outlives its test, whatever the test did (a writer spinning in busy mode never ends by itself).
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** A running pg-writer-child and what it printed (see the event list at the top of that file). */
export interface Writer {
  child: ChildProcess;
  lines: string[];
  /** Acknowledged entry ids, in the order they were appended. */
  acks: string[];
  /** The first line starting with `prefix` (rejects when the child exits without printing one). */
  next(prefix: string): Promise<string>;
  /** Resolves with the signal that ended it (null: it exited), and its exit code. */
  exited: Promise<{ signal: NodeJS.Signals | null; code: number | null; stderr: string }>;
  /** Lines printed so far that start with `prefix`. */
  count(prefix: string): number;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

export interface WriterArgs {
  mode: "run" | "images" | "busy" | "busy-artifact";
  url: string;
  /** A session id, or "new". */
  ref: string;
  tag: string;
  seed: number;
  root: string;
  control: string;
  lockStaleMs?: number;
  count?: number;
}

export function startWriter(a: WriterArgs): Writer {
  const args = [a.mode, a.url, a.ref, a.tag, String(a.seed), a.root, a.control, String(a.lockStaleMs ?? 10_000), String(a.count ?? 0)];
  const child = spawnTs(CHILD, args);
  started.push(child);
  const lines: string[] = [];
  const acks: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (l: string) => void }> = [];
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (d: string) => (stderr += d));
  onLines(child, (line) => {
    lines.push(line);
    if (line.startsWith("ack ")) acks.push(...line.slice(4).split(" "));
    for (const w of waiters.splice(0)) {
      if (line.startsWith(w.prefix)) w.resolve(line);
      else waiters.push(w);
    }
  });
  const exited = new Promise<{ signal: NodeJS.Signals | null; code: number | null; stderr: string }>((resolve) =>
    child.once("close", (code, signal) => resolve({ signal, code, stderr })),
  );
  const next = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen !== undefined) return resolve(seen);
      waiters.push({ prefix, resolve });
      void exited.then(({ code, signal }) =>
        reject(new Error(`writer ${a.tag} ended (${code ?? signal}) before "${prefix}": ${lines.slice(-5).join(" | ")} ${stderr}`)),
      );
    });
  const count = (prefix: string) => lines.filter((l) => l.startsWith(prefix)).length;
  return { child, lines, acks, next, exited, count, stderr: () => stderr };
}

/** Resolves once `writer` has `n` acknowledged entries (polling its output, no fixed sleep). */
export async function untilAcked(writer: Writer, n: number): Promise<void> {
  while (writer.acks.length < n) {
    if (writer.child.exitCode !== null || writer.child.signalCode !== null) {
      const last = writer.lines.slice(-3).map((l) => l.slice(0, 60));
      throw new Error(`writer ended with ${writer.acks.length} < ${n} acks: ${last.join(" | ")}\n${writer.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Figures of one checked session. */
export interface Checked {
  rows: number;
  acked: number;
}

/**
 * Checks the rows of `sessionId` against the ids acknowledged to its writers (in order): every
 * acknowledged entry is stored, in the order it was appended; seqs run 1…n without a gap; no
 * entry id and no line is stored twice; every parentId names an earlier entry.
 */
export async function checkRows(store: PgStore, sessionId: string, acked: readonly string[]): Promise<Checked> {
  const { session, entries } = await store.loadSession(sessionId);
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
  expect(session.lastSeq).toBe(entries.length);
  const ids = entries.map((e) => e.entryId);
  expect(new Set(ids).size, "duplicate entry ids").toBe(ids.length);
  expect(new Set(entries.map((e) => e.line)).size, "duplicate lines").toBe(entries.length);
  const ackedSet = new Set(acked);
  expect(
    ids.filter((id) => ackedSet.has(id!)),
    "acknowledged entries missing or out of order",
  ).toEqual(acked);
  checkParents(entries);
  return { rows: entries.length, acked: acked.length };
}

function checkParents(entries: readonly PgEntry[]): void {
  const seen = new Set<string>();
  for (const row of entries) {
    const entry = JSON.parse(row.line) as { id: string; parentId: string | null };
    if (entry.parentId !== null) expect(seen.has(entry.parentId), `parent of ${entry.id}`).toBe(true);
    seen.add(entry.id);
  }
}

/** A store for checking rows directly (closed by the caller). */
export function rowsOf(url: string): Promise<PgStore> {
  return PgStore.connect(url);
}

/** One fresh database for a suite: its URL, a store to check rows with, and a backend for managers (closed after the suite). */
export function suiteDatabase(): { url: string; store: PgStore; backend: PostgresBackend } {
  const db = {} as { url: string; store: PgStore; backend: PostgresBackend };
  beforeAll(async () => {
    db.url = await freshDatabase();
    db.store = await rowsOf(db.url);
    db.backend = PostgresBackend.of(db.url);
  });
  afterAll(async () => {
    await db.backend?.close();
    await db.store?.close();
  });
  return db;
}
