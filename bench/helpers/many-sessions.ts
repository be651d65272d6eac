// W7 child: `count` writable sessions open at once, `rounds` appends to each (round-robin), against
// the same number of appends to one session. Prints {ours, base} in µs per append, or {error}.
// Messages: `2k` (default) ~2 KB agent messages, `w1` the peers harness's W1 messages (~9 KB).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { w1Messages } from "../peers/workloads.ts";
import { agentMessage, prng } from "../workload.ts";

const count = Number(process.argv[2]);
const rounds = Number(process.argv[3]);
const root = mkdtempSync(join(tmpdir(), "ts-bench-many-"));
const shape = process.argv[4] ?? "2k";
const random = prng(11);
const messages = (shape === "w1" ? w1Messages(64) : Array.from({ length: 64 }, (_, i) => agentMessage(random, i, 2048))) as {
  role: string;
}[];
try {
  const one = await SessionManager.create(join(root, "one"), { root });
  let t = performance.now();
  for (let i = 0; i < count * rounds; i++) one.appendMessage(messages[i % messages.length]!);
  const base = ((performance.now() - t) / (count * rounds)) * 1000;
  await one.close();

  const sessions: SessionManager[] = [];
  for (let i = 0; i < count; i++) sessions.push(await SessionManager.create(join(root, "many"), { root }));
  t = performance.now();
  for (let r = 0; r < rounds; r++) for (const [i, s] of sessions.entries()) s.appendMessage(messages[(i + r) % messages.length]!);
  const ours = ((performance.now() - t) / (count * rounds)) * 1000;
  for (const s of sessions) await s.close();
  console.log(JSON.stringify({ ours, base }));
} catch (err) {
  console.log(JSON.stringify({ error: `${(err as { code?: string }).code ?? ""} ${(err as Error).message}`.slice(0, 200) }));
} finally {
  rmSync(root, { recursive: true, force: true });
}
