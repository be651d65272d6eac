// pi-coding-agent 1.5.2 (Node 22) running one workload through its public SessionManager API.
// pi writes nothing until the first assistant message and appends with appendFileSync (open/write/close per entry).
import { statSync } from "node:fs";
import { join } from "node:path";
import { appendP50s, checkLines, ownCopy, ownTree, readJob, report, time } from "./child-io.ts";
import { PI_MODULE } from "./paths.ts";
import { CWD, openingPair, w1Messages, w2Entries } from "./workloads.ts";

const { SessionManager: Pi } = (await import(PI_MODULE)) as { SessionManager: any };
const job = readJob();
const dir = join(job.work, "pi-sessions");

function started(): any {
  const m = Pi.create(CWD, dir);
  for (const message of openingPair()) m.appendMessage(message);
  return m;
}

switch (job.workload) {
  case "W1": {
    const messages = w1Messages(job.count);
    const m = started();
    const ms = await time(() => {
      for (const message of messages) m.appendMessage(message);
    });
    checkLines(m.getSessionFile(), job.count + 3);
    report({ ms });
    break;
  }
  case "W2": {
    const { images, texts } = w2Entries(job.count);
    const m = started();
    const result = appendP50s((e) => m.appendMessage(e), images, texts);
    checkLines(m.getSessionFile(), 2 * job.count + 3);
    report(result);
    break;
  }
  case "W3":
  case "W4": {
    const copy = ownCopy(job);
    let m: any;
    const ms = await time(() => (m = Pi.open(copy, dir)));
    report({ ms, entries: m.getEntries().length });
    break;
  }
  case "W4B":
    report({ unsupported: "pi 1.5.2 has no blob store: images stay inline" });
    break;
  case "W5": {
    const bucket = ownTree(job);
    let n = 0;
    const ms = await time(async () => (n = (await Pi.list(CWD, bucket)).length));
    if (n !== job.count) throw new Error(`listed ${n} of ${job.count}`);
    report({ ms });
    break;
  }
  case "W6": {
    let fork: any;
    const ms = await time(() => (fork = Pi.forkFrom(job.source!, CWD, dir)));
    if (statSync(fork.getSessionFile()).size < statSync(job.source!).size * 0.9) throw new Error("fork is short");
    report({ ms });
    break;
  }
  case "W6-artifacts":
    report({ unsupported: "pi 1.5.2 has no artifacts dir; its forkFrom copies the transcript only" });
    break;
}
