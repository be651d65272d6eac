import { utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/pi/index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { assistant, piHome, user } from "./helpers.ts";

describe("the pi facade's resume pickers leave archived sessions out", () => {
  let saved: string | undefined;
  let root: string;
  beforeEach(() => {
    saved = process.env.TRANSCRIPT_STORE_HOME;
    root = tempDir("ts-pi-root-");
    process.env.TRANSCRIPT_STORE_HOME = root; // the store root whose lifecycle.jsonl the facade reads
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TRANSCRIPT_STORE_HOME;
    else process.env.TRANSCRIPT_STORE_HOME = saved;
  });

  it("list, listAll and continueRecent skip an archived session; unarchive brings it back", async () => {
    const h = piHome();
    const opts = { agentDir: h.agentDir, blobsDir: h.blobsDir };
    const files: string[] = [];
    const ids: string[] = [];
    for (const [i, text] of ["older", "newer"].entries()) {
      const sm = SessionManager.create(h.cwd, undefined, opts);
      sm.appendMessage(user(text) as never);
      sm.appendMessage(assistant(`re ${text}`) as never);
      files.push(sm.getSessionFile()!);
      ids.push(sm.getSessionId());
      const t = new Date(Date.UTC(2026, 0, i + 1));
      utimesSync(sm.getSessionFile()!, t, t);
    }
    const life = Lifecycle.open({ root, sessionsDir: join(h.agentDir, "sessions"), layout: "pi" });
    await life.archive(files[1]!);
    expect((await SessionManager.list(h.cwd, undefined, undefined, opts)).map((s) => s.path)).toEqual([files[0]]);
    expect((await SessionManager.listAll(undefined, undefined, undefined, opts)).map((s) => s.path)).toEqual([files[0]]);
    expect(SessionManager.continueRecent(h.cwd, undefined, opts).getSessionFile()).toBe(files[0]);
    await life.unarchive(ids[1]!);
    expect((await SessionManager.list(h.cwd, undefined, undefined, opts)).map((s) => s.path).sort()).toEqual([...files].sort());
    expect(SessionManager.continueRecent(h.cwd, undefined, opts).getSessionFile()).toBe(files[1]);
  });
});
