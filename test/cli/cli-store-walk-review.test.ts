import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";

/*
 * Outside review of issue 32 (acceptance 3): the store walk again under umask 000, with the secret
 * also in a session name, an artifact's name and summary, and `redact --backup`: every file the
 * store makes is 0600 and every directory 0700, and after `redact` the secret is in no byte of the
 * store except the backup `redact` names.
 */

const GH = "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";
const NEEDLES = [GH, "ucnzwjuvfk6lo0pinux"];
const OLD = new Date(Date.now() - 3_600_000);

let umask = 0;
let scratch = "";
let previousTmp: string | undefined;
beforeEach(() => {
  umask = process.umask(0);
  scratch = mkdtempSync(join(tmpdir(), "ts-walk0-"));
  mkdirSync(join(scratch, "tmp"), { mode: 0o700 });
  previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = join(scratch, "tmp");
});
afterEach(() => {
  process.umask(umask);
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
  clearSessionInfoCache();
  rmSync(scratch, { recursive: true, force: true });
});

function walk(dir: string, out: string[], skip: (path: string) => boolean): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) out.push(`${path}: dir mode ${mode.toString(8)}`);
      walk(path, out, skip);
      continue;
    }
    if (st.isSymbolicLink()) continue;
    if (mode !== 0o600) out.push(`${path}: file mode ${mode.toString(8)}`);
    if (skip(path)) continue;
    const bytes = readFileSync(path).toString("latin1").toLowerCase();
    for (const needle of NEEDLES) if (bytes.includes(needle.toLowerCase())) out.push(`${path}: holds ${needle}`);
  }
}

async function run(root: string, argv: string[]): Promise<Record<string, any>[]> {
  const out = await cli(["--root", root, ...argv, "--json"], { cwd: join(scratch, "out") });
  expect([argv.join(" "), out.code, out.stderr]).toEqual([argv.join(" "), 0, out.stderr]);
  return out.records;
}

describe("the store walk under umask 000, the secret in names and summaries, redact --backup", () => {
  it("modes stay 0600/0700 and only the named backup holds the secret", async () => {
    const root = join(scratch, "store");
    mkdirSync(join(scratch, "out"), { mode: 0o700 });
    const sm = await SessionManager.create(join(scratch, "proj"), { root });
    sm.appendMessage({ role: "user", content: `push with ${GH} please` });
    sm.appendEntry({ type: "session_info", name: `deploy with ${GH}` });
    const saved = sm.artifacts!.save(`token ${GH}\n`, { toolType: "bash", name: `out-${GH}.txt`, summary: `the ${GH}` } as never);
    sm.appendMessage({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [{ type: "text", text: `output in artifact://${saved.id}` }],
    });
    await sm.close();
    utimesSync(sm.sessionFile!, OLD, OLD);
    await run(root, ["ls", "--all"]);
    await run(root, ["search", "push"]);
    await run(root, ["du"]);
    await run(root, ["usage"]);
    const before: string[] = [];
    walk(root, before, () => false);
    expect(before.filter((f) => f.includes("holds")).length).toBeGreaterThan(3);
    const redacted = await run(root, ["redact", sm.sessionId, "--backup"]);
    const backups = JSON.stringify(redacted).match(/"[^"]*\.bak"/g) ?? [];
    expect(backups.length).toBeGreaterThan(0);
    await run(root, ["search", "push"]);
    await run(root, ["ls", "--all"]);
    await run(root, ["rm", sm.sessionId]);
    await run(root, ["restore", sm.sessionId]);
    await run(root, ["index", "--rebuild"]);
    const findings: string[] = [];
    walk(root, findings, (p) => p.endsWith(".bak"));
    walk(join(scratch, "tmp"), findings, () => false);
    expect(findings).toEqual([]);
  });
});
