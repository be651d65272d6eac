import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { followForeign } from "../../src/interchange/follow-foreign.ts";
import { importForeignFile, type ForeignImportReport } from "../../src/interchange/import-foreign.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

const BIN = join(import.meta.dirname, "../../bin/transcript-store.mjs");
const CODEX = join(import.meta.dirname, "../fixtures/foreign/codex/v0.129.0-turn-2.jsonl");

/** Replaces `path` at once (a new file renamed over it): a watcher never sees it half written. */
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** Reports as they come, and a way to wait for the next one (no sleeping: it resolves on the report). */
function reports() {
  const seen: ForeignImportReport[] = [];
  const waiting: Array<(r: ForeignImportReport) => void> = [];
  let taken = 0;
  return {
    seen,
    onReport(r: ForeignImportReport) {
      seen.push(r);
      const w = waiting.shift();
      if (w) {
        taken++;
        w(r);
      }
    },
    next(): Promise<ForeignImportReport> {
      if (taken < seen.length) return Promise.resolve(seen[taken++]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

describe("import --follow: the store kept in step with a transcript being written", () => {
  it("imports a file, appends what it grows by, reports a rewrite, and writes nothing for an unchanged file", async () => {
    const lines = readFileSync(CODEX, "utf8").split("\n").filter(Boolean);
    const dir = tempDir();
    const file = join(dir, "rollout-2026-05-12T10-00-00-a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl");
    writeFileSync(file, `${lines.slice(0, 12).join("\n")}\n`);
    const root = tempDir();
    const r = reports();
    const stop = new AbortController();
    const following = followForeign("codex", [dir], { root, signal: stop.signal, onReport: (x) => r.onReport(x), intervalMs: 20 });

    const first = await r.next();
    expect(first).toMatchObject({ status: "created", counts: { records: 12 } });
    appendFileSync(file, `${lines.slice(12).join("\n")}\n`);
    // a look in the middle of the write sees a shorter file (its last line torn): appended too, then the rest
    let grown = await r.next();
    while (grown.counts.records < lines.length) {
      expect(grown).toMatchObject({ status: "appended", id: first.id });
      grown = await r.next();
    }
    expect(grown).toMatchObject({ status: "appended", id: first.id, counts: { records: lines.length } });

    // a file rewritten in its middle is refused and reported; the store keeps what it had
    const rewritten = [...lines];
    rewritten[5] = rewritten[5]!.replace("Hello, Codex!", "Hello, Other!");
    replaceFile(file, `${rewritten.join("\n")}\n`);
    const conflict = await r.next();
    expect(conflict).toMatchObject({ status: "refused", error: { code: "IMPORT_CONFLICT" } });
    stop.abort();
    await following;

    // unchanged files were never reported (each report above is a change), and a re-run changes nothing
    expect(r.seen.map((x) => x.status).filter((s, i, all) => s !== all[i - 1])).toEqual(["created", "appended", "refused"]);
    replaceFile(file, `${lines.join("\n")}\n`);
    expect((await importForeignFile("codex", file, { root })).status).toBe("unchanged");
    const m = await SessionManager.open(grown.location!, { root, readOnly: true });
    expect(m.getEntries().length).toBe(grown.entries);
    await m.close();
  });

  it("finds a session file that appears while it follows", async () => {
    const dir = tempDir();
    const root = tempDir();
    const r = reports();
    const stop = new AbortController();
    const following = followForeign("codex", [dir], { root, signal: stop.signal, onReport: (x) => r.onReport(x), intervalMs: 20 });
    replaceFile(join(dir, "rollout-new.jsonl"), readFileSync(CODEX, "utf8"));
    expect(await r.next()).toMatchObject({ status: "created" });
    stop.abort();
    await following;
  });
});

describe("import --from codex --follow, killed", () => {
  it("SIGKILL while it follows loses nothing and leaves nothing half-written: the next import completes the session", async () => {
    const lines = readFileSync(CODEX, "utf8").split("\n").filter(Boolean);
    const dir = tempDir();
    const file = join(dir, "rollout-kill.jsonl");
    replaceFile(file, `${lines.slice(0, 6).join("\n")}\n`);
    const root = tempDir();
    const child = spawn(process.execPath, [BIN, "import", "--from", "codex", "--follow", "--json", "--root", root, dir], {
      env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    let out = "";
    const reported = (n: number) =>
      new Promise<void>((resolve) => {
        const look = () => {
          if (out.split("\n").filter(Boolean).length >= n) resolve();
        };
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          look();
        });
        look();
      });
    await reported(1);
    // the agent writes on; the follower is killed while (or before) it imports the new lines
    appendFileSync(file, `${lines.slice(6).join("\n")}\n`);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const again = await importForeignFile("codex", file, { root });
    expect(["appended", "unchanged"]).toContain(again.status);
    expect(again.counts.records).toBe(lines.length);
    const m = await SessionManager.open(again.location!, { root, readOnly: true });
    expect(m.loadReport.malformed).toEqual([]);
    expect(m.getEntries().length).toBe(again.entries);
    await m.close();
  });
});
