// Child for the PostgreSQL fault tests:
//   pg-writer-child.ts <mode> <url> <sessionRef|new> <tag> <seed> <root> <controlFile> <lockStaleMs> [count]
// Every line it prints is an event the parent parses:
//   session <id>        — the session it writes (created or opened with its lease)
//   locked              — the lease was someone else's (SESSION_LOCKED at open); it exits
//   ack <id> <id> …     — these entries were appended before a flush() that resolved: acknowledged
//   fail <code>         — a flush() threw (the entries stay queued; the next flush retries them)
//   lost <code> <ro>    — the lease is gone (a flush or an append refused); <ro> is the manager's isReadOnly
//   flush <code|ok>     — then one more flush() (nothing it holds may be acknowledged any more)
//   after <code|ok>     — then one more append
//   closed              — the control file appeared: it closed the session cleanly and exits
// Modes:
//   run    — appends forever (text, images every 5th, a branch now and then), flushing every 1–20
//            appends; stops at the control file (close) or at the loss of its lease.
//   images — like run, every other entry an image (three shared by all writers, the others its
//            own: imageOf), until [count] entries are acknowledged; then closes.
//   busy   — appends and flushes one entry, prints "ready", appends one more and blocks its event
//            loop (no commit, no lease renewal can run) until the control file appears; then
//            flushes that entry: the database's fence must refuse it.
//   busy-artifact — like busy, but what waits is an artifact saved (file "<tag>" in its artifacts),
//            no entry: flushing it after a takeover must be refused too.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PostgresBackend } from "../../../src/index.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { prng } from "../../support/child.ts";
import { makePng } from "../../support/png.ts";
import { imageOf } from "./pg-images.ts";

const [mode, url, ref, tag, seedArg, root, control, staleArg, countArg] = process.argv.slice(2) as string[] as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
const say = (line: string) => process.stdout.write(`${line}\n`);
const codeOf = (err: unknown) => (err as { code?: string }).code ?? String(err);

const store = PostgresBackend.of(url);
const options = { store, root, lockStaleMs: Number(staleArg) };
let m: SessionManager;
try {
  m = ref === "new" ? await SessionManager.create(join(root, tag), options) : await SessionManager.open(ref, options);
} catch (err) {
  if (codeOf(err) !== "SESSION_LOCKED") throw err;
  say("locked");
  await store.close();
  process.exit(0);
}
say(`session ${m.sessionId}`);

const random = prng(Number(seedArg));
const ids: string[] = [];
let pending: string[] = [];

function append(i: number): void {
  if (ids.length > 3 && i % 11 === 10) m.branch(ids[Math.floor(random() * ids.length)]!);
  const text = `${tag}/${i}`;
  let content: unknown = text;
  if (mode === "images" && i % 2 === 1) {
    content = [
      { type: "text", text },
      { type: "image", data: imageOf(tag, i).toString("base64"), mimeType: "image/png" },
    ];
  } else if (mode === "run" && i % 5 === 4) {
    content = [
      { type: "text", text },
      { type: "image", data: makePng(8, 8, i).toString("base64"), mimeType: "image/png" },
    ];
  }
  const id = m.appendMessage({ role: i % 2 ? "assistant" : "user", content, timestamp: i });
  ids.push(id);
  pending.push(id);
}

/** The lease is gone: report it, try one more append, and end. */
async function lost(err: unknown): Promise<never> {
  say(`lost ${codeOf(err)} ${m.isReadOnly}`);
  try {
    await m.flush();
    say("flush ok");
  } catch (again) {
    say(`flush ${codeOf(again)}`);
  }
  try {
    append(-1);
    say("after ok");
  } catch (late) {
    say(`after ${codeOf(late)}`);
  }
  await store.close();
  process.exit(0);
}

const isLoss = (err: unknown) => codeOf(err) === "SESSION_LOCKED" || codeOf(err) === "READ_ONLY";

/** flush(): true when acknowledged; false when it failed otherwise (the entries stay queued). */
async function flush(): Promise<boolean> {
  try {
    await m.flush();
  } catch (err) {
    if (isLoss(err)) return lost(err);
    say(`fail ${codeOf(err)}`);
    return false;
  }
  if (pending.length > 0) say(`ack ${pending.join(" ")}`);
  pending = [];
  return true;
}

if (mode === "busy" || mode === "busy-artifact") {
  append(0);
  await flush();
  say("ready");
  if (mode === "busy") append(1);
  else m.artifacts!.save(`${tag} wrote this`, { toolType: tag });
  while (!existsSync(control)) {
    // a blocked event loop: neither the queued commit nor the lease renewal can run
  }
  await flush();
  say("late ok");
} else {
  const target = mode === "images" ? Number(countArg) : Number.POSITIVE_INFINITY;
  let acked = 0;
  for (let i = 0; acked < target && !existsSync(control); ) {
    const n = 1 + Math.floor(random() * 20);
    try {
      for (let k = 0; k < n; k++) append(i++);
    } catch (err) {
      if (isLoss(err)) await lost(err);
      throw err;
    }
    const before = pending.length;
    if (await flush()) acked += before;
    else await new Promise((r) => setTimeout(r, 20)); // the server is away: keep appending, a little later
  }
}
try {
  await m.close();
  say("closed");
} catch (err) {
  say(`fail ${codeOf(err)}`);
}
await store.close();
