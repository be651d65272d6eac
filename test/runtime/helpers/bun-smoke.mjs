// Runs under Bun (omp's runtime) against the compiled package in dist/, driven by test/runtime/bun-smoke.test.ts.
//   write <root> <cwd> <png>  create a session, append a text and an image entry, spill an artifact, fork, close,
//                             reopen both; prints one JSON line with what it saw
//   hold <root> <path>        open the session for writing, print "ready", then append one entry as soon as
//                             `<path>.go` exists and exit (a second writer meanwhile is refused)
//   contend <root> <path>     try to open the session for writing; prints "ok" or the error's code
// Plain JavaScript with node: built-ins only, so that Bun runs exactly the built package and nothing of the tests.
import { existsSync, readFileSync } from "node:fs";
import { SessionManager } from "../../../dist/index.js";

const [mode, root, arg, png] = process.argv.slice(2);

const runtime = typeof globalThis.Bun === "undefined" ? `node ${process.version}` : `bun ${globalThis.Bun.version}`;

if (mode === "write") {
  const data = readFileSync(png).toString("base64");
  const image = {
    role: "user",
    content: [
      { type: "text", text: "what is this?" },
      { type: "image", data, mimeType: "image/png" },
    ],
  };
  const session = await SessionManager.create(arg, { root });
  const textId = session.appendMessage({ role: "user", content: "hello from bun" });
  const imageId = session.appendMessage(image);
  const big = "x".repeat(100_000);
  const spilled = session.artifacts.spill(big, { toolType: "bash" });
  const replyId = session.appendMessage({ role: "assistant", content: [{ type: "text", text: JSON.stringify(spilled) }] });
  const fork = await session.fork();
  const forkFile = fork.sessionFile;
  const forkArtifactsDir = fork.artifactsDir;
  await fork.close();
  await session.close();

  const reopened = await SessionManager.open(session.sessionFile, { root });
  const reopenedFork = await SessionManager.open(forkFile, { root });
  const content = reopened.getEntry(imageId).message.content;
  const result = {
    runtime,
    sessionFile: session.sessionFile,
    artifactsDir: session.artifactsDir,
    forkFile,
    forkArtifactsDir,
    ids: [textId, imageId, replyId],
    pointer: spilled.pointer,
    reopenedIds: reopened.getEntries().map((e) => e.id),
    forkIds: reopenedFork.getEntries().map((e) => e.id),
    imageBack: content[1].data === data,
    artifactBack: reopened.artifacts.get(spilled.pointer) === big,
    forkArtifactBack: reopenedFork.artifacts.get(spilled.pointer) === big,
  };
  await reopenedFork.close();
  await reopened.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (mode === "hold") {
  const session = await SessionManager.open(arg, { root });
  process.stdout.write("ready\n");
  const timer = setInterval(async () => {
    if (!existsSync(`${arg}.go`)) return;
    clearInterval(timer);
    session.appendMessage({ role: "user", content: `appended by the holder (${runtime})` });
    await session.close();
    process.stdout.write("done\n");
  }, 20);
} else if (mode === "contend") {
  try {
    const session = await SessionManager.open(arg, { root });
    await session.close();
    process.stdout.write("ok\n");
  } catch (err) {
    process.stdout.write(`${err?.code ?? String(err)}\n`);
  }
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
