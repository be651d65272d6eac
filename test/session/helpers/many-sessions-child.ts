// Opens `count` writable sessions at once in one process and appends `rounds` messages to each,
// round-robin; prints the number of lines each session file holds at the end, or the error code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [root, countText, roundsText] = process.argv.slice(2);
const count = Number(countText);
const rounds = Number(roundsText);
const sessions: SessionManager[] = [];
try {
  for (let i = 0; i < count; i++) sessions.push(await SessionManager.create(join(root!, "proj"), { root: root! }));
  for (let r = 0; r < rounds; r++) {
    for (const [i, s] of sessions.entries()) s.appendMessage({ role: "user", content: `session ${i} round ${r}` });
  }
  const lines = new Set(sessions.map((s) => readFileSync(s.sessionFile!, "utf8").split("\n").length - 1));
  for (const s of sessions) await s.close();
  console.log(JSON.stringify({ ok: true, lines: [...lines] }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, code: (err as { code?: string }).code, message: (err as Error).message }));
  process.exitCode = 1;
}
