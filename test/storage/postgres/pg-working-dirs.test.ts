import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  makeWorkingDir,
  reclaimDeadWorkingDirs,
  removeWorkingDir,
  workingDirsRoot,
} from "../../../src/storage/postgres/pg-working-dirs.ts";
import { tempDir } from "../../support/temp-dir.ts";

const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

/** Points os.tmpdir() at a fresh directory for this test. */
function privateTmp(): string {
  const dir = tempDir("ts-wd-");
  process.env.TMPDIR = dir;
  return dir;
}

const host = hostname()
  .replace(/[^A-Za-z0-9.-]/g, "_")
  .slice(0, 64);
// above every pid_max Linux allows (2^22): certainly not running
const DEAD_PID = 99_999_999;

describe("PostgreSQL artifact working directories", () => {
  it("are made under one private root per user, named after their owner process and host", () => {
    const tmp = privateTmp();
    const dir = makeWorkingDir();
    expect(dirname(dir)).toBe(workingDirsRoot());
    expect(dirname(dirname(dir))).toBe(tmp);
    expect(basename(dir)).toMatch(new RegExp(`^${process.pid}@${host.replace(/\./g, "\\.")}-[A-Za-z0-9]{6}$`));
    removeWorkingDir(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it("reclaiming removes only directories of dead processes of this host", () => {
    privateTmp();
    const root = dirname(makeWorkingDir());
    const names = [`${DEAD_PID}@${host}-aaaaaa`, `1@${host}-bbbbbb`, `${DEAD_PID}@other-host-cccccc`, "not-ours", `${DEAD_PID}@${host}`];
    for (const name of names) mkdirSync(join(root, name, "artifacts"), { recursive: true });
    expect(reclaimDeadWorkingDirs(root)).toBe(1);
    const left = readdirSync(root);
    expect(left).not.toContain(names[0]);
    for (const name of names.slice(1)) expect(left).toContain(name);
    expect(left.filter((n) => n.startsWith(`${process.pid}@`))).toHaveLength(1); // our own stays
    // making a directory reclaims first
    mkdirSync(join(root, `${DEAD_PID}@${host}-dddddd`));
    makeWorkingDir();
    expect(readdirSync(root)).not.toContain(`${DEAD_PID}@${host}-dddddd`);
  });

  it("refuses a root that is a symlink or open to others (PERSISTENCE_FAILED), writing nothing through it", () => {
    const tmp = privateTmp();
    const elsewhere = tempDir("ts-wd-target-");
    symlinkSync(elsewhere, workingDirsRoot());
    expect(() => makeWorkingDir()).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readdirSync(elsewhere)).toEqual([]);

    process.env.TMPDIR = join(tmp, "second");
    mkdirSync(process.env.TMPDIR);
    mkdirSync(workingDirsRoot());
    chmodSync(workingDirsRoot(), 0o777);
    expect(() => makeWorkingDir()).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readdirSync(workingDirsRoot())).toEqual([]);
  });
});
