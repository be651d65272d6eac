// Child process for the artifact tests: `artifact-child.ts <mode> <dir> [args…]`.
//   save <dir> <count> <label> — print "ready", wait for "go" on stdin, save <count> artifacts,
//                                print their ids as one JSON array.
//   save-one <dir> <text>      — save one artifact and print its id.
//   page <dir> <id> <offset> <limit> <agentId> — read one page through `read`, `artifact://<id>`
//                                and `agent://<agentId>`; print them and the peak RSS as JSON.
//   churn <dir> <rounds> <label> — print "ready", wait for "go", then each round save 3 artifacts
//                                and remove them again (clear, or cleanupExpired of a short TTL);
//                                print every [id, content] it was issued as one JSON array.
//   snapshot <dir> <now> <keys-json-file> — print the JSON snapshot of the directory.
//   continue <dir>             — save one more artifact and allocate an agent output id; print both.
//   session-read <sessionFile> <root> — open the session read-only and print what its artifact URLs give.
import { readFileSync } from "node:fs";
import { ArtifactStore } from "../../../src/artifacts/artifact-store.ts";
import { resolveInternalUrl } from "../../../src/artifacts/internal-urls.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { childContent } from "./child-content.ts";
import { snapshot, type SnapshotKeys } from "./snapshot.ts";

const [mode, dir, ...args] = process.argv.slice(2) as [string, string, ...string[]];

if (mode === "save") {
  const [countArg, label] = args as [string, string];
  const store = new ArtifactStore(dir);
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const ids: string[] = [];
  for (let i = 0; i < Number(countArg); i++) ids.push(store.save(childContent(label, i), { toolType: label, name: `${label}-${i}` }).id);
  process.stdout.write(`${JSON.stringify(ids)}\n`);
  process.exit(0);
} else if (mode === "churn") {
  const [roundsArg, label] = args as [string, string];
  let now = 0;
  const store = new ArtifactStore(dir, { now: () => now });
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const issued: [string, string][] = [];
  for (let round = 0; round < Number(roundsArg); round++) {
    for (let k = 0; k < 3; k++) {
      const content = `${label}:${round}:${k}`;
      issued.push([store.save(content, { toolType: label, ttlMs: 1 }).id, content]);
    }
    if (round % 2 === 0) store.clear();
    else {
      now += 10;
      store.cleanupExpired();
    }
  }
  process.stdout.write(`${JSON.stringify(issued)}\n`);
  process.exit(0);
} else if (mode === "page") {
  const [id, offset, limit, agentId] = args as [string, string, string, string];
  const store = new ArtifactStore(dir);
  const options = { offset: Number(offset), limit: Number(limit) };
  const read = store.read(id, options);
  const url = resolveInternalUrl(`artifact://${id}`, { session: { artifacts: store }, ...options });
  const agent = resolveInternalUrl(`agent://${agentId}`, { session: { artifacts: store }, ...options });
  const pages = { read, url: { content: url.content, page: url.page }, agent: { content: agent.content, page: agent.page } };
  process.stdout.write(`${JSON.stringify({ ...pages, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
} else if (mode === "save-one") {
  const store = new ArtifactStore(dir);
  process.stdout.write(`${store.save(args[0]!, { toolType: "bash" }).id}\n`);
} else if (mode === "snapshot") {
  const [nowArg, keysFile] = args as [string, string];
  const store = new ArtifactStore(dir, { now: () => Number(nowArg) });
  const keys = JSON.parse(readFileSync(keysFile, "utf8")) as SnapshotKeys;
  process.stdout.write(`${JSON.stringify(snapshot(store, keys))}\n`);
} else if (mode === "continue") {
  const store = new ArtifactStore(dir);
  const next = store.save("after reopen", { toolType: "bash" }).id;
  const agent = store.allocateAgentOutputId("reviewer");
  process.stdout.write(`${JSON.stringify({ next, agent })}\n`);
} else if (mode === "session-read") {
  const m = await SessionManager.open(dir, { root: args[0]!, readOnly: true });
  const out = {
    artifact: resolveInternalUrl("artifact://0", { session: m }).content,
    byName: m.artifacts!.get("notes"),
    agent: resolveInternalUrl("agent://worker?q=.answer", { session: m }).content,
  };
  await m.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
