import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isTempFileName } from "../../src/io.ts";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";

/*
 * Acceptance 3 of issue 32: every CLI command that writes runs against ONE store; then every file
 * and directory under the root, the temp dir and the outputs is walked: modes 0600 / 0700 (under
 * umask 022), no temp file or spool left, and no byte of a secret that was redacted or a session
 * that was purged anywhere, the search index included.
 */

const GH = "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";
const AWS = "AKIAZZZZZZZZZZZZZZZZ";
const PURGED = "zanzibarquokkaplatypus";
/** What FTS5 keeps of GH (lowercased, split at `_`): a tail that no prefix compression splits. */
const NEEDLES = [GH, "ucnzwjuvfk6lo0pinux", AWS, PURGED];
const OLD = new Date(Date.now() - 3_600_000);

let umask = 0;
let previousTmp: string | undefined;
let tmp = "";
let scratch = "";
beforeEach(() => {
  umask = process.umask(0o022);
  scratch = mkdtempSync(join(tmpdir(), "ts-walk-"));
  tmp = join(scratch, "tmp");
  mkdirSync(tmp, { mode: 0o700 });
  previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp; // os.tmpdir(): what every command's temp work sees
});
afterEach(() => {
  process.umask(umask);
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
  clearSessionInfoCache();
  rmSync(scratch, { recursive: true, force: true });
});

interface Finding {
  path: string;
  what: string;
}

/** Every defect under `dir`: a mode other than 0600/0700, a temp file, a needle in any byte. */
function walk(dir: string, out: Finding[]): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) out.push({ path, what: `dir mode ${mode.toString(8)}` });
      walk(path, out);
      continue;
    }
    if (st.isSymbolicLink()) continue;
    if (mode !== 0o600) out.push({ path, what: `file mode ${mode.toString(8)}` });
    if (isTempFileName(name) || name.endsWith(".tmp")) out.push({ path, what: "temp file left" });
    const bytes = readFileSync(path).toString("latin1").toLowerCase();
    for (const needle of NEEDLES) if (bytes.includes(needle.toLowerCase())) out.push({ path, what: `holds ${needle}` });
  }
}

async function run(root: string, argv: string[]): Promise<Record<string, any>[]> {
  const out = await cli(["--root", root, ...argv, "--json"], { cwd: join(scratch, "out") });
  if (out.code !== 0) console.log(argv, out.stdout, out.stderr);
  expect([argv.join(" "), out.code, out.stderr]).toEqual([argv.join(" "), 0, out.stderr]);
  return out.records;
}

describe("one store through every writing command (issue 32, acceptance 3)", () => {
  it("leaves every file 0600 and directory 0700, no temp file, and no redacted or purged byte anywhere", async () => {
    const root = join(scratch, "store");
    const outDir = join(scratch, "out");
    mkdirSync(outDir, { mode: 0o700 });
    const keyFile = join(outDir, "old.key");
    const newKeyFile = join(outDir, "new.key");
    const oldKey = randomBytes(32);
    writeFileSync(keyFile, `${oldKey.toString("hex")}\n`, { mode: 0o600 });
    writeFileSync(newKeyFile, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600 });

    // sessions: a secret in a message, a secret only in an artifact, one to purge, one plain, one encrypted
    const leaky = await SessionManager.create(join(scratch, "proj"), { root });
    leaky.appendMessage({ role: "user", content: `push with ${GH} please` });
    leaky.appendMessage({ role: "assistant", content: [{ type: "text", text: "pushed" }] });
    await leaky.close();
    const spilled = await SessionManager.create(join(scratch, "proj"), { root });
    spilled.appendMessage({ role: "user", content: "run the deploy" });
    const saved = spilled.artifacts!.save(`aws_access_key_id=${AWS}\n`, { toolType: "bash" });
    spilled.appendMessage({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [{ type: "text", text: `output in artifact://${saved.id}` }],
    });
    await spilled.close();
    const doomed = await SessionManager.create(join(scratch, "proj"), { root });
    doomed.appendMessage({ role: "user", content: `the word is ${PURGED}` });
    await doomed.close();
    const plain = await SessionManager.create(join(scratch, "other"), { root });
    plain.appendMessage({ role: "user", content: "a plain question" });
    plain.appendMessage({ role: "assistant", content: [{ type: "text", text: "a plain answer" }], model: "m-large" } as never);
    await plain.close();
    const sealed = await SessionManager.create(join(scratch, "proj"), { root, encryption: { key: oldKey } });
    sealed.appendMessage({ role: "user", content: "quince" });
    await sealed.close();
    for (const m of [leaky, spilled, doomed, plain]) utimesSync(m.sessionFile!, OLD, OLD);

    // reading commands that write caches: the listing, the index, the accounting
    await run(root, ["ls", "--all"]);
    await run(root, ["search", "plain"]);
    await run(root, ["search", GH]);
    await run(root, ["search", PURGED]);
    await run(root, ["index"]);
    await run(root, ["index", "--rebuild"]);
    await run(root, ["du"]);
    await run(root, ["verify"]);

    // redaction, the trash and its purge, pruning
    // Named, not the whole store: `redact` over a store holding an encrypted session exits 1 with
    // KEY_REQUIRED for it (a defect outside the index, noted for the lead; redaction owns it).
    await run(root, ["redact", leaky.sessionId, spilled.sessionId]);
    await run(root, ["rm", doomed.sessionId]);
    await run(root, ["trash"]);
    await run(root, ["restore", doomed.sessionId]);
    await run(root, ["rm", doomed.sessionId]);
    await run(root, ["purge", "--all"]);
    await run(root, ["prune", "--older-than", "3650d"]);

    // moving sessions in and out: bundle, unbundle, export, import, fork, mv, migrate, rekey
    const bundle = join(outDir, "plain.bundle");
    await run(root, ["bundle", plain.sessionId, "-o", bundle]);
    await run(root, ["export", plain.sessionId, "--to", "markdown", "-o", join(outDir, "plain.md")]);
    const exported = join(outDir, "plain.jsonl");
    writeFileSync(exported, (await cli(["--root", root, "export", plain.sessionId])).stdout, { mode: 0o600 });
    await run(root, ["rm", plain.sessionId]);
    await run(root, ["purge", "--all"]);
    await run(root, ["unbundle", bundle]);
    await run(root, ["fork", plain.sessionId]);
    await run(root, ["mv", spilled.sessionId, join(scratch, "moved")]);
    // Named, as redact above: `migrate --in-place` over the store fails (KEY_REQUIRED) on the encrypted session.
    await run(root, ["migrate", "--in-place", leaky.sessionFile!]);
    await run(root, ["rekey", sealed.sessionFile!, "--key-file", keyFile, "--new-key-file", newKeyFile]);
    await run(root, ["inline-images"]);
    await run(root, ["gc"]);
    await run(root, ["usage"]);
    await run(root, ["stats"]);
    // import: the exported session under a new id (its own id is in the store again)
    const copy = readFileSync(exported, "utf8").replaceAll(plain.sessionId, "0badc0de-0000-4000-8000-00000000c0de");
    writeFileSync(exported, copy, { mode: 0o600 });
    await run(root, ["import", exported]);

    // the index caught up after all of it
    await run(root, ["search", "plain"]);
    clearSessionInfoCache();
    await run(root, ["ls", "--all"]);

    const findings: Finding[] = [];
    walk(root, findings);
    walk(tmp, findings);
    walk(outDir, findings);
    expect(findings).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
    // the walk saw the files it is about
    expect(readdirSync(join(root, "index"))).toContain("sessions.sqlite");
    expect(lstatSync(root).mode & 0o777).toBe(0o700);
  });
});
