// pi 1.5.2's own session search, as its resume picker runs it (all sessions): SessionManager.listAll()
// reads every session file under $PI_CODING_AGENT_DIR/sessions into SessionInfo (with allMessagesText),
// then each keystroke's filter is filterAndSortSessions(sessions, query, "relevance", "all") from
// dist/modes/interactive/components/session-selector-search.js (not in the package's exports; imported by path).
// Args: <agent dir> <runs> <query>...; prints {"listAllMs":…,"queryMs":[…],"matches":[…]} (queryMs per run and query).
import { join } from "node:path";
import { PI_MODULE } from "../peers/paths.ts";

const [agentDir, runs, ...queries] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR = agentDir;
const { SessionManager } = (await import(PI_MODULE)) as { SessionManager: { listAll(): Promise<unknown[]> } };
const searchModule = join(PI_MODULE, "../../modes/interactive/components/session-selector-search.js");
const { filterAndSortSessions } = (await import(searchModule)) as {
  filterAndSortSessions(sessions: unknown[], query: string, sortMode: string, nameFilter: string): unknown[];
};
let start = performance.now();
const sessions = await SessionManager.listAll();
const listAllMs = performance.now() - start;
const queryMs: number[] = [];
const matches: number[] = [];
for (let r = 0; r < Number(runs); r++) {
  for (const query of queries) {
    start = performance.now();
    const found = filterAndSortSessions(sessions, query, "relevance", "all");
    queryMs.push(performance.now() - start);
    if (r === 0) matches.push(found.length);
  }
}
console.log(JSON.stringify({ sessions: sessions.length, listAllMs, queryMs, matches }));
