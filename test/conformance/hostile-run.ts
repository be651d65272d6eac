import { type SessionEntry, SessionManager, type SessionManagerOptions, type StoreWarning } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { expectedValue, type HostileCase, toJson } from "../support/hostile-values.ts";
import type { BackendUnderTest } from "./backends.ts";

/**
 * Runs one hostile case against a backend and says what became of it: it round-tripped (the stored
 * line, an eager and a lazy reopen and `export` all hold what docs/format.md promises), it was
 * refused with a coded error before anything was acknowledged (and the session went on), or it
 * failed (anything else: an uncoded throw, a flush that refused, a value changed or lost).
 */
export type Outcome = { kind: "round-trip" } | { kind: "refused"; code: string } | { kind: "failed"; detail: string };

const user = (content: unknown) => ({ role: "user", content, timestamp: 1 });
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], timestamp: 2 });

/** What a put left to check after the reopen (null: all as expected, else what differs). */
type Check = (again: SessionManager) => string | null;

interface Put {
  entryId: string | null;
  check: Check | null;
}

const codeOf = (err: unknown): string | null => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? code : null;
};
const fail = (detail: string): Outcome => ({ kind: "failed", detail });
const errorText = (err: unknown) => `${(err as Error)?.constructor?.name}: ${String((err as Error)?.message ?? err).slice(0, 200)}`;

/** Puts the case's value into the session through its slot's API. Throws what the API throws. */
async function put(m: SessionManager, c: HostileCase, before: string): Promise<Put> {
  const v = c.value;
  // String slots are given strings; a value class meant for objects reaches them as its JSON.
  const text = () => (typeof v === "string" ? v : JSON.stringify(v));
  switch (c.slot) {
    case "user-message":
      if (c.valueClass === "image")
        return { entryId: m.appendMessage(user([{ type: "text", text: "look" }, ...(v as object[])])), check: null };
      return { entryId: m.appendMessage(user(v)), check: null };
    case "assistant-text":
      return { entryId: m.appendMessage(assistant(text())), check: null };
    case "message-details":
      return {
        entryId: m.appendMessage({ role: "toolResult", toolCallId: "t1", content: [{ type: "text", text: "r" }], details: v }),
        check: null,
      };
    case "custom-data":
      return { entryId: m.appendCustomEntry("fuzz", v), check: null };
    case "custom-type":
      return { entryId: m.appendCustomEntry(text(), { n: 1 }), check: null };
    case "entry-type":
      return { entryId: m.appendEntry({ type: text(), note: "x" }), check: null };
    case "label":
      return { entryId: m.appendLabelChange(before, text()), check: null };
    case "session-name":
      return { entryId: m.appendEntry({ type: "session_info", name: text() }), check: null };
    case "move-cwd":
      await m.moveTo(`/work/${text()}`);
      return {
        entryId: null,
        check: (again) => (again.cwd === m.cwd ? null : `moved cwd ${JSON.stringify(again.cwd)} != ${JSON.stringify(m.cwd)}`),
      };
    case "cwd":
      return {
        entryId: null,
        check: (again) => (again.cwd === m.cwd ? null : `cwd ${JSON.stringify(again.cwd)} != ${JSON.stringify(m.cwd)}`),
      };
    case "artifact": {
      const ref = m.artifacts!.save(v, { toolType: "fuzz" });
      return {
        entryId: null,
        check: (again) => {
          const got = again.artifacts!.get(ref.id);
          if (typeof v === "string") return got === v ? null : `artifact ${ref.id} text differs`;
          return toJson(got) === toJson(v) ? null : `artifact ${ref.id} value differs`;
        },
      };
    }
    case "artifact-meta": {
      const s = text();
      const ref = m.artifacts!.save("content", { toolType: s, summary: s });
      return {
        entryId: null,
        check: (again) => {
          const got = again.artifacts!.getRef(ref.id);
          if (got === null) return `artifact ${ref.id} lost`;
          return got.summary === s && got.toolType === ref.toolType ? null : `artifact ${ref.id} metadata differs`;
        },
      };
    }
    case "agent-output": {
      const s = text();
      const id = m.artifacts!.allocateAgentOutputId("fuzz");
      m.artifacts!.saveAgentOutput(id, s);
      return { entryId: null, check: (again) => (again.artifacts!.getAgentOutput(id) === s ? null : `agent output ${id} differs`) };
    }
    case "agent-output-id":
      return { entryId: null, check: agentOutputChain(m, text()) };
  }
}

/** Allocates `name` under ever longer parent prefixes until the API refuses: every id it gave must survive. */
function agentOutputChain(m: SessionManager, name: string): Check {
  const saved: string[] = [];
  let prefix: string | undefined;
  for (let i = 0; i < 40; i++) {
    let id: string;
    try {
      id = m.artifacts!.allocateAgentOutputId(name, prefix === undefined ? {} : { parentPrefix: prefix });
    } catch (err) {
      if (codeOf(err) === "INVALID_ARTIFACT_ID" && saved.length > 0) break; // the API's own bound
      throw err;
    }
    m.artifacts!.saveAgentOutput(id, `# ${id}\n`);
    saved.push(id);
    prefix = id;
  }
  // The deepest prefix once more: the same stem with a `-2` suffix, the longest id the API gives.
  const last = saved.at(-1)!;
  const parentPrefix = last.includes(".") ? last.slice(0, last.lastIndexOf(".")) : undefined;
  const again = m.artifacts!.allocateAgentOutputId(name, parentPrefix === undefined ? {} : { parentPrefix });
  m.artifacts!.saveAgentOutput(again, `# ${again}\n`);
  saved.push(again);
  return (reopened) => {
    const lost = saved.filter((id) => reopened.artifacts!.getAgentOutput(id) !== `# ${id}\n`);
    return lost.length === 0 ? null : `agent output id(s) lost: ${lost.map((id) => `${id.length} chars`).join(", ")}`;
  };
}

const refOf = (m: SessionManager) => m.sessionFile ?? m.sessionId;

/** Runs case `c` in a new session of the store `base` names. */
export async function runCase(c: HostileCase, backend: BackendUnderTest, base: SessionManagerOptions): Promise<Outcome> {
  const warnings: StoreWarning[] = [];
  const options: SessionManagerOptions = { ...base, maxStringChars: c.maxStringChars, onWarning: (w) => warnings.push(w) };
  const cwd = c.slot === "cwd" ? `/work/${c.value as string}` : "/work/fuzz";
  let m: SessionManager;
  try {
    m = await SessionManager.create(cwd, options);
  } catch (err) {
    const code = codeOf(err);
    return code === null ? fail(`create threw uncoded ${errorText(err)}`) : { kind: "refused", code };
  }
  let refused: string | null = null;
  let putResult: Put = { entryId: null, check: null };
  // Not a user message: the hostile one may be the session's first (its listing preview).
  const before = m.appendCustomEntry("before", { n: 0 });
  const artifactsBefore = c.slot.startsWith("artifact") ? m.artifacts!.list().length : 0;
  try {
    putResult = await put(m, c, before);
  } catch (err) {
    refused = codeOf(err);
    if (refused === null) return fail(`put threw uncoded ${errorText(err)}`);
    if (m.getEntries().length !== 1) return fail(`refused (${refused}) but memory holds ${m.getEntries().length} entries`);
    if (c.slot.startsWith("artifact") && m.artifacts!.list().length !== artifactsBefore)
      return fail(`refused (${refused}) but an artifact was kept`);
  }
  const after = m.appendMessage(assistant("after"));
  try {
    await m.flush();
    await m.close();
  } catch (err) {
    // Not acknowledged, so a refusal, if the session is not blocked: can a later entry commit?
    let later = "a later entry is blocked too";
    try {
      m.appendMessage(assistant("later"));
      await m.flush();
      later = "a later entry committed";
    } catch {}
    await m.close().catch(() => undefined);
    return fail(`flush refused ${codeOf(err) ?? "uncoded"}, ${later}: ${errorText(err)}`);
  }
  const lost = warnings.filter((w) => w.code === "PERSISTENCE_FAILED" || w.code === "ARTIFACT_COPY_FAILED");
  if (lost.length > 0) return fail(`warned ${lost[0]!.code}: ${lost[0]!.message.slice(0, 200)}`);
  const problem = await verify(m, c, backend, options, putResult, refused === null ? [before, putResult.entryId, after] : [before, after]);
  if (problem !== null) return fail(problem);
  return refused === null ? { kind: "round-trip" } : { kind: "refused", code: refused };
}

/** Compares the stored lines, an eager reopen, a lazy reopen and `export` with the model. */
async function verify(
  m: SessionManager,
  c: HostileCase,
  backend: BackendUnderTest,
  options: SessionManagerOptions,
  putResult: Put,
  ids: Array<string | null>,
): Promise<string | null> {
  const memory = m.getEntries();
  const wanted = ids.filter((id): id is string => id !== null);
  if (memory.map((e) => e.id).join() !== wanted.join()) return "memory holds other entries than were acknowledged";
  const expect = (e: SessionEntry, as: "stored" | "read") => toJson(expectedValue(e, c.maxStringChars, as));
  const lines = await backend.storedLines(m, options);
  if (lines.length !== memory.length) return `${lines.length} lines stored for ${memory.length} entries`;
  for (let i = 0; i < memory.length; i++) {
    if (!lines[i]!.equals(Buffer.from(expect(memory[i]!, "stored")))) return `stored line ${i + 1} differs from the model`;
  }
  const listed = await SessionManager.list(m.cwd, options);
  if (!listed.some((info) => info.id === m.sessionId && info.cwd === m.cwd)) return "not listed under its cwd";
  let again: SessionManager;
  try {
    again = await SessionManager.open(refOf(m), { ...options, readOnly: true });
  } catch (err) {
    return `eager reopen threw ${codeOf(err) ?? "uncoded"} ${errorText(err)}`;
  }
  try {
    if (again.cwd !== m.cwd) return "reopened cwd differs";
    const reread = again.getEntries();
    if (reread.length !== memory.length) return `reopen has ${reread.length} entries, ${memory.length} were stored`;
    for (let i = 0; i < memory.length; i++) if (toJson(reread[i]) !== expect(memory[i]!, "read")) return `reopened entry ${i + 1} differs`;
    const checked = putResult.check?.(again) ?? null;
    if (checked !== null) return checked;
  } finally {
    await again.close();
  }
  const lazy = await SessionManager.open(refOf(m), { ...options, readOnly: true, rehydrate: "lazy" });
  const lazyEntries = lazy.getEntries();
  await lazy.close();
  for (let i = 0; i < memory.length; i++)
    if (toJson(lazyEntries[i]) !== lines[i]!.toString("utf8")) return `lazy entry ${i + 1} differs from its line`;
  if (backend.cliArgs === null) return null; // a backend the CLI cannot reach: its export is the library's, checked above
  const exported = await cli(["export", m.sessionId, ...backend.cliArgs(options)]);
  if (exported.code !== 0) return `export exited ${exported.code}: ${exported.stderr.slice(0, 200)}`;
  const out = exported.stdout.split("\n").slice(1, -1);
  for (let i = 0; i < memory.length; i++) if (out[i] !== expect(memory[i]!, "read")) return `exported entry ${i + 1} differs`;
  return null;
}
