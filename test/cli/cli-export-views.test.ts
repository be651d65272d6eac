import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateAtif } from "../../src/interchange/atif-validate.ts";
import { viewsSession } from "../interchange/views-session.ts";
import { cli } from "../support/cli.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("export --to atif|markdown|html", () => {
  it("writes to stdout, and with -o the same bytes to a new file", async () => {
    const s = await viewsSession();
    for (const to of ["atif", "markdown", "html"]) {
      const out = await cli(["export", s.m.sessionId, "--to", to, "--root", s.root]);
      expect(out.code).toBe(0);
      expect(out.stderr).toBe("");
      if (to === "atif") expect(validateAtif(JSON.parse(out.stdout))).toEqual([]);
      const file = join(tempDir(), `session.${to}`);
      const written = await cli(["export", s.m.sessionId, "--to", to, "-o", file, "--root", s.root]);
      expect(written.code).toBe(0);
      expect(written.stdout).toBe("");
      expect(readFileSync(file, "utf8")).toBe(out.stdout);
      expect(readdirSync(dirname(file))).toEqual([`session.${to}`]);
    }
  });

  it("--branch picks the branch ending at an entry", async () => {
    const s = await viewsSession();
    const out = await cli(["export", s.m.sessionId, "--to", "markdown", "--branch", s.ids.otherLeaf, "--root", s.root]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Other branch answer.");
    expect(out.stdout).not.toContain("Active branch");
    const missing = await cli(["export", s.m.sessionId, "--to", "html", "--branch", "00000000", "--root", s.root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ENTRY_NOT_FOUND");
    expect(missing.stdout).toBe("");
  });

  it("refuses an -o file that exists (OUTPUT_EXISTS): the file is unchanged and nothing else is written", async () => {
    const s = await viewsSession();
    const dir = tempDir();
    const file = join(dir, "taken.html");
    writeFileSync(file, "mine");
    const out = await cli(["export", s.m.sessionId, "--to", "html", "-o", file, "--root", s.root]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("OUTPUT_EXISTS");
    expect(readFileSync(file, "utf8")).toBe("mine");
    expect(readdirSync(dir)).toEqual(["taken.html"]);
  });

  it("refuses a link planted at the -o name and never writes through it", async () => {
    const s = await viewsSession();
    const dir = tempDir();
    const target = join(dir, "elsewhere.txt");
    symlinkSync(target, join(dir, "out.json"));
    const out = await cli(["export", s.m.sessionId, "--to", "atif", "-o", join(dir, "out.json"), "--root", s.root]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("OUTPUT_EXISTS");
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dir)).toEqual(["out.json"]);
  });

  it("an image whose blob is gone shows as a note, says so on stderr and exits 1", async () => {
    const s = await viewsSession();
    for (const name of readdirSync(join(s.root, "blobs"))) if (/^[0-9a-f]{64}$/.test(name)) rmSync(join(s.root, "blobs", name));
    for (const to of ["atif", "markdown", "html"]) {
      const out = await cli(["export", s.m.sessionId, "--to", to, "--root", s.root]);
      expect(out.code).toBe(1);
      expect(out.stderr).toContain("1 image(s) could not be read from the blob store");
      expect(out.stdout).not.toContain("data:image/png;base64,blob:");
      if (to === "atif") {
        expect(validateAtif(JSON.parse(out.stdout))).toEqual([]);
        expect(out.stdout).toContain("[image not readable (its blob is missing or damaged): blob:sha256:");
      }
    }
  });

  it("usage errors: an unknown --to, -o or --branch without --to", async () => {
    const s = await viewsSession();
    const cases = [
      ["--to", "pdf"],
      ["-o", join(tempDir(), "x")],
      ["--branch", s.ids.a1],
    ];
    for (const extra of cases) {
      const out = await cli(["export", s.m.sessionId, ...extra, "--root", s.root]);
      expect(out.code).toBe(2);
      expect(out.stdout).toBe("");
    }
  });
});

describe.skipIf(!pgCluster())("export --to against a PostgreSQL store", () => {
  it("gives the same ATIF as the file store for the same session, image read back from the database", async () => {
    const s = await viewsSession();
    const url = await freshDatabase();
    expect((await cli(["migrate", "--root", s.root, "--to", url])).code).toBe(0);
    const fromFile = await cli(["export", s.m.sessionId, "--to", "atif", "--root", s.root]);
    const fromDb = await cli(["export", s.m.sessionId, "--to", "atif"], { env: { TRANSCRIPT_STORE_URL: url } });
    expect(fromDb.stderr).toBe("");
    expect(fromDb.code).toBe(0);
    expect(fromDb.stdout).toBe(fromFile.stdout);
    expect(fromDb.stdout).toContain(`data:image/png;base64,${s.png}`);
    const html = await cli(["export", s.m.sessionId, "--to", "html", "--branch", s.ids.otherLeaf], { env: { TRANSCRIPT_STORE_URL: url } });
    expect(html.code).toBe(0);
    expect(html.stdout).toContain(`"leaf":"${s.ids.otherLeaf}"`);
  });
});
