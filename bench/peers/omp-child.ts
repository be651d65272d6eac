// oh-my-pi 18.3.4 (Bun only; its @oh-my-pi/* siblings pinned to 18.2.x, see install.sh) running one workload through
// its SessionManager (dist/types/session/session-manager.d.ts).
// omp keeps one append fd, externalizes images to its blob store on write, and copies artifacts on forkFrom.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { appendP50s, checkLines, ownBlobs, ownCopy, ownTree, readJob, report, time } from "./child-io.ts";
import { OMP_MODULE, OMP_UTILS } from "./paths.ts";
import { artifactText, CWD, openingPair, w1Messages, w2Entries } from "./workloads.ts";

const { SessionManager: Omp } = (await import(OMP_MODULE)) as { SessionManager: any };
const { getBlobsDir } = (await import(OMP_UTILS)) as { getBlobsDir: () => string };
const job = readJob();
const dir = join(job.work, "omp-sessions");

async function started(): Promise<any> {
  const m = Omp.create(CWD, dir);
  for (const message of openingPair()) m.appendMessage(message);
  await m.flush();
  return m;
}

switch (job.workload) {
  case "W1": {
    const messages = w1Messages(job.count);
    const m = await started();
    const ms = await time(async () => {
      for (const message of messages) m.appendMessage(message);
      await m.flush();
    });
    await m.close();
    checkLines(m.getSessionFile(), job.count + 3);
    report({ ms });
    break;
  }
  case "W2": {
    const { images, texts } = w2Entries(job.count);
    const m = await started();
    const result = appendP50s((e) => m.appendMessage(e), images, texts);
    await m.close();
    checkLines(m.getSessionFile(), 2 * job.count + 3);
    report(result);
    break;
  }
  case "W3":
  case "W4": {
    const copy = ownCopy(job);
    let m: any;
    const ms = await time(async () => (m = await Omp.open(copy, dir)));
    report({ ms, entries: m.getEntries().length });
    break;
  }
  case "W4B": {
    // omp resolves blob refs from its global blob dir when it opens a session.
    const copy = ownCopy(job);
    ownBlobs(job, getBlobsDir());
    let m: any;
    const ms = await time(async () => (m = await Omp.open(copy, dir)));
    const first = m.getEntries().find((e: any) => e.message?.content?.some?.((b: any) => b.type === "image"));
    const data = first?.message.content.find((b: any) => b.type === "image").data;
    if (typeof data !== "string" || data.startsWith("blob:")) throw new Error("omp did not resolve the blob refs at open");
    report({ ms, entries: m.getEntries().length });
    break;
  }
  case "W5": {
    const bucket = ownTree(job);
    let n = 0;
    const ms = await time(async () => (n = (await Omp.list(CWD, bucket)).length));
    if (n !== job.count) throw new Error(`listed ${n} of ${job.count}`);
    report({ ms });
    break;
  }
  case "W6": {
    let fork: any;
    const ms = await time(async () => (fork = await Omp.forkFrom(job.source!, CWD, dir)));
    if (statSync(fork.getSessionFile()).size < statSync(job.source!).size * 0.9) throw new Error("fork is short");
    report({ ms });
    break;
  }
  case "W6-artifacts": {
    const m = await started();
    for (let i = 0; i < job.count; i++) await m.saveArtifact(artifactText(i), "bash");
    const source = m.getSessionFile();
    await m.close();
    let fork: any;
    const ms = await time(async () => (fork = await Omp.forkFrom(source, CWD, dir)));
    const copied = readdirSync(fork.getArtifactsDir()).length;
    if (copied < job.count) throw new Error(`fork has ${copied} artifacts of ${job.count}`);
    report({ ms });
    break;
  }
}
