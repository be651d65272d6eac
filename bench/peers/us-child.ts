// transcript-store (src/, through tsx) running one workload; same Job/Result protocol as the peers.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { appendP50s, checkLines, ownBlobs, ownCopy, ownTree, readJob, report, time } from "./child-io.ts";
import { artifactText, CWD, openingPair, w1Messages, w2Entries } from "./workloads.ts";

type Message = { role: string };
const job = readJob();
const root = join(job.work, "store");

async function started(): Promise<SessionManager> {
  const m = await SessionManager.create(CWD, { root });
  for (const message of openingPair()) m.appendMessage(message as Message);
  return m;
}

switch (job.workload) {
  case "W1": {
    const messages = w1Messages(job.count) as Message[];
    const m = await started();
    const ms = await time(() => {
      for (const message of messages) m.appendMessage(message);
    });
    await m.close();
    checkLines(m.sessionFile!, job.count + 3);
    report({ ms });
    break;
  }
  case "W2": {
    const { images, texts } = w2Entries(job.count);
    const m = await started();
    const result = appendP50s((e) => m.appendMessage(e as Message), images, texts);
    await m.close();
    checkLines(m.sessionFile!, 2 * job.count + 3);
    report(result);
    break;
  }
  case "W3":
  case "W4": {
    const copy = ownCopy(job);
    let m: SessionManager | undefined;
    const ms = await time(async () => (m = await SessionManager.open(copy, { root, readOnly: true, rehydrate: job.mode ?? "eager" })));
    report({ ms, entries: m!.getEntries().length });
    break;
  }
  case "W4B": {
    const copy = ownCopy(job);
    ownBlobs(job, join(root, "blobs"));
    let m: SessionManager | undefined;
    const ms = await time(async () => (m = await SessionManager.open(copy, { root, readOnly: true, rehydrate: "eager" })));
    report({ ms, entries: m!.getEntries().length });
    break;
  }
  case "W5": {
    const bucket = ownTree(job);
    let n = 0;
    const ms = await time(async () => (n = (await SessionManager.list(CWD, { sessionsDir: join(bucket, ".."), layout: "omp" })).length));
    if (n !== job.count) throw new Error(`listed ${n} of ${job.count}`);
    report({ ms });
    break;
  }
  case "W6": {
    let fork: SessionManager | undefined;
    const ms = await time(async () => (fork = await SessionManager.forkFrom(job.source!, CWD, { root })));
    await fork!.close();
    if (statSync(fork!.sessionFile!).size < statSync(job.source!).size * 0.9) throw new Error("fork is short");
    report({ ms });
    break;
  }
  case "W6-artifacts": {
    const m = await started();
    for (let i = 0; i < job.count; i++) m.artifacts!.save(artifactText(i), { toolType: "bash" });
    const source = m.sessionFile!;
    await m.close();
    let fork: SessionManager | undefined;
    const ms = await time(async () => (fork = await SessionManager.forkFrom(source, CWD, { root })));
    const copied = readdirSync(fork!.artifactsDir!).length;
    await fork!.close();
    if (copied < job.count) throw new Error(`fork has ${copied} artifacts of ${job.count}`);
    report({ ms });
    break;
  }
}
