import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle, SessionManager, unbundle } from "../../src/index.ts";
import { SessionManager as PiSessionManager } from "../../src/pi/index.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { UNKNOWN_CWD } from "../../src/session/recorded-cwd.ts";
import { bytesOf, makeSession } from "../bundle/helpers/bundle-fixtures.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Rewrites the header line of the session file at `path` with `cwd` (removed when undefined). */
function setHeaderCwd(path: string, cwd: string | undefined): void {
  const [head, ...rest] = readFileSync(path, "utf8").split("\n");
  const header = JSON.parse(head!) as Record<string, unknown>;
  if (cwd === undefined) delete header.cwd;
  else header.cwd = cwd;
  writeFileSync(path, [JSON.stringify(header), ...rest].join("\n"));
}

const CASES = [
  ["empty", ""],
  ["relative", "some/where"],
] as const;

describe("a session whose recorded cwd is empty or relative is never filed under the importer's cwd", () => {
  for (const [label, cwd] of CASES) {
    it(`unbundle (${label}): under the placeholder`, async () => {
      const a = tempDir();
      const b = tempDir();
      const { id, path } = await makeSession("/proj/one", { root: a });
      setHeaderCwd(path, cwd);
      const bytes = await bytesOf(bundle([id], { root: a }));
      const report = await unbundle([bytes], { root: b, cwd: b });
      expect(report.sessions.map((s) => s.status)).toEqual(["created"]);
      expect(await SessionManager.list(process.cwd(), { root: b })).toEqual([]);
      expect(await SessionManager.list(b, { root: b })).toEqual([]);
      expect((await SessionManager.list(UNKNOWN_CWD, { root: b })).map((s) => s.id)).toEqual([id]);
    });

    it(`NDJSON import (${label}): under the placeholder`, async () => {
      const root = tempDir();
      const work = tempDir();
      const header = {
        type: "session",
        version: 3,
        id: "0199aaaa-0000-7000-8000-000000000001",
        timestamp: "2026-01-01T00:00:00.000Z",
        cwd,
      };
      const entry = {
        type: "message",
        id: "e1",
        parentId: null,
        timestamp: "2026-01-01T00:00:01.000Z",
        message: { role: "user", content: "hi", timestamp: 1 },
      };
      const run = await cli(["import", "--root", root], { cwd: work, stdin: `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n` });
      expect(run.code, run.stderr).toBe(0);
      expect(await SessionManager.list(work, { root })).toEqual([]);
      expect((await SessionManager.list(UNKNOWN_CWD, { root })).map((s) => s.id)).toEqual([header.id]);
    });
  }

  it("migrate into the store (a relative cwd): under the placeholder, not the migrating process's cwd", async () => {
    const root = tempDir();
    const src = join(tempDir(), "legacy.jsonl");
    const header = { type: "session", version: 2, id: "s-rel", timestamp: "2026-01-01T00:00:00.000Z", cwd: "some/where" };
    const entry = {
      type: "message",
      id: "e1",
      parentId: null,
      timestamp: "2026-01-01T00:00:01.000Z",
      message: { role: "user", content: "x" },
    };
    writeFileSync(src, `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
    const report = await migrateFile(src, { sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs") });
    expect(report.error).toBeUndefined();
    expect(report.target).toContain(`/sessions/${cwdBucket(UNKNOWN_CWD)}/`);
  });

  it("list, continueRecent and resolve refuse an empty cwd (INVALID_OPTION)", async () => {
    const root = tempDir();
    await expectCode(SessionManager.list("", { root }), "INVALID_OPTION");
    await expectCode(SessionManager.continueRecent("", { root }), "INVALID_OPTION");
    await expectCode(SessionManager.resolve("0199", "", { root }), "INVALID_OPTION");
  });

  it("the pi facade opens a session recorded with an empty cwd under the placeholder, not the process's cwd", async () => {
    const dir = tempDir();
    const m = PiSessionManager.create("/proj/pi", join(dir, "s"));
    m.appendMessage({ role: "user", content: "hi", timestamp: 1 });
    const file = m.getSessionFile()!;
    setHeaderCwd(file, "");
    expect(PiSessionManager.open(file).getCwd()).toBe(UNKNOWN_CWD);
  });
});
