import { Readable } from "node:stream";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { SessionManager } from "../../src/index.ts";
import { closeUrlStores } from "../../src/storage/store-url.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { useColour } from "../../src/cli/search-output.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "../search/helpers/sessions.ts";

const ID = "aaaa1111-0000-4000-8000-000000000001";

/** One session of five entries: u1 a1 u2 a2 u3, the parser crash in a2. */
function store() {
  const root = tempDir("ts-cli-loop-");
  const t = (s: number) => `2026-01-02T10:00:0${s}.000Z`;
  writeSession(
    join(root, "sessions"),
    "-tmp-a",
    ID,
    "/work/a",
    message("user", "why does the build fail", { id: "u1", timestamp: t(1) }) +
      message("assistant", "Let me look at the logs", { id: "a1", timestamp: t(2) }) +
      message("user", "it fails in the parser", { id: "u2", timestamp: t(3) }) +
      message("assistant", "The parseStatement call crashes on empty input", { id: "a2", timestamp: t(4) }) +
      message("user", "thanks, fix it", { id: "u3", timestamp: t(5) }),
  );
  return root;
}

// Issue 34: the daily loop from the shell: search, read in context, exit codes, pickers.
describe("transcript-store search and show --at (issue 34)", () => {
  it("exits 0 with hits, 1 with none, 2 on an error (grep's convention)", async () => {
    const root = store();
    expect((await cli(["--root", root, "search", "crash"])).code).toBe(0);
    const none = await cli(["--root", root, "search", "okapi"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no hits");
    expect((await cli(["--root", root, "search", '"unclosed'])).code).toBe(2);
    expect((await cli(["--root", root, "search", "crash", "--sort", "sideways"])).code).toBe(2);
  });

  it("prints each hit with its session's title and cwd; word forms and identifier parts find it", async () => {
    const root = store();
    const out = await cli(["--root", root, "search", "parse", "statement", "crash"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`${ID}  a2  assistant  2026-01-02 10:00  /work/a  why does the build fail`);
    expect(out.stdout).toContain("«parseStatement» call «crashes»");
  });

  it("show --at prints the entry with -C/-A/-B neighbours, marked as grep marks a match", async () => {
    const root = store();
    const c1 = await cli(["--root", root, "show", ID, "--at", "a2", "-C", "1"]);
    expect(c1.code).toBe(0);
    const heads = c1.stdout.split("\n").filter((l) => /^[>-] /.test(l));
    expect(heads.map((l) => l.slice(0, 4))).toEqual(["- u2", "> a2", "- u3"]);
    expect(c1.stdout).toContain("    The parseStatement call crashes on empty input");
    const before = await cli(["--root", root, "show", ID, "--at", "a2", "-B", "2", "-A", "0"]);
    expect(
      before.stdout
        .split("\n")
        .filter((l) => /^[>-] /.test(l))
        .map((l) => l.slice(2, 4)),
    ).toEqual(["a1", "u2", "a2"]);
    const json = await cli(["--root", root, "show", ID, "--at", "u1", "-C", "1", "--json"]);
    expect(json.records.map((r) => [r.entry.id, r.match])).toEqual([
      ["u1", true],
      ["a1", false],
    ]);
    expect((await cli(["--root", root, "show", ID, "--at", "nope"])).code).toBe(1);
    expect((await cli(["--root", root, "show", ID, "--at", "a2", "-C", "x"])).code).toBe(2);
  });

  it("search -C prints each hit with its neighbours; --format prints one line per hit for a picker", async () => {
    const root = store();
    const around = await cli(["--root", root, "search", "crash", "-C", "1"]);
    expect(around.stdout).toContain("    - u2");
    expect(around.stdout).toContain("    > a2");
    expect(around.stdout).toContain("    - u3");
    const picker = await cli(["--root", root, "search", "crash", "--format", "{sessionId} {entryId}\\t{title}: {snippet}"]);
    expect(picker.stdout).toBe(`${ID} a2\twhy does the build fail: The parseStatement call «crashes» on empty input\n`);
    expect((await cli(["--root", root, "search", "crash", "--format", "{nope}"])).code).toBe(2);
  });

  it("colours matches only on a terminal, and not under NO_COLOR", async () => {
    const root = store();
    const base = { stderr: () => {}, stdin: Readable.from([""]), isTTY: true, stdoutIsTTY: true, columns: 200, cwd: root };
    let shown = "";
    const code = await main(["--root", root, "search", "crash"], { ...base, stdout: (t) => (shown += t), env: {} });
    expect(code).toBe(0);
    expect(shown).toContain("\u001b[1;31mcrashes\u001b[0m");
    // the transcript's own escape sequences stay escaped: only the writer's colour is raw
    expect(shown.replaceAll("\u001b[1;31m", "").replaceAll("\u001b[0m", "")).not.toContain("\u001b");
    let plain = "";
    await main(["--root", root, "search", "crash"], { ...base, stdout: (t) => (plain += t), env: { NO_COLOR: "1" } });
    expect(plain).toContain("«crashes»");
    expect(plain).not.toContain("\u001b");
    expect(useColour({ ...base, stdout: () => {}, stdoutMarked: () => {}, stdoutIsTTY: false, env: {} })).toBe(false);
  });

  // Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
  it.skipIf(!pgCluster())("on a PostgreSQL store: search -C and show --at read the entry in context, a fork's copy folded", async () => {
    const url = await freshDatabase();
    const m = await SessionManager.create("/proj", { store: url });
    const u1 = m.appendMessage({ role: "user", content: "why does the lexer fail", timestamp: 1 });
    const a1 = m.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "the lexer crashes on tabs" }],
      model: "m",
      timestamp: 2,
    });
    const u2 = m.appendMessage({ role: "user", content: "fix it please", timestamp: 3 });
    await m.flush();
    const fork = await m.fork();
    await fork.close();
    await m.close();
    await closeUrlStores();
    const out = await cli(["--store", url, "search", "crash", "-C", "1"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`${a1}  assistant`);
    expect(out.stdout).toContain("(also in 1 fork)");
    expect(out.stdout).toContain(`    - ${u1}`);
    expect(out.stdout).toContain(`    - ${u2}`);
    const shown = await cli(["--store", url, "show", m.sessionId, "--at", a1, "-B", "1", "-A", "0"]);
    expect(
      shown.stdout
        .split("\n")
        .filter((l) => /^[>-] /.test(l))
        .map((l) => l.slice(2, 2 + a1.length)),
    ).toEqual([u1, a1]);
    expect((await cli(["--store", url, "search", "okapi"])).code).toBe(1);
    await closeUrlStores();
  });
});
