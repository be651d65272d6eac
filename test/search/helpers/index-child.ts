/**
 * A real process for the index's crash and race tests.
 * `refresh <root> <reads> <batchBytes>`: refreshes the index of <root>, and at its <reads>-th read says
 * "stopped" and blocks (the parent SIGKILLs it there, mid-transaction).
 * `append <path> <count>`: appends <count> message lines to a session file, each in two writes
 * (a torn line in between), then says "done".
 */
import { appendFileSync } from "node:fs";
import { io } from "../../../src/io.ts";
import { openSessionIndex } from "../../../src/search/session-index.ts";
import { message } from "./sessions.ts";

const [mode, target, count, batchBytes] = process.argv.slice(2);

if (mode === "refresh") {
  let reads = 0;
  const readSync = io.readSync;
  io.readSync = ((...args: Parameters<typeof readSync>) => {
    if (++reads === Number(count)) {
      process.stdout.write("stopped\n");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until killed
    }
    return readSync(...args);
  }) as typeof readSync;
  const index = await openSessionIndex({ root: target!, batchBytes: Number(batchBytes) });
  await index.refresh();
  await index.close();
  process.stdout.write("finished\n");
} else if (mode === "append") {
  for (let i = 0; i < Number(count); i++) {
    const text = message("user", `appended number${i} racing`, { id: `r${i.toString().padStart(7, "0")}` });
    appendFileSync(target!, text.slice(0, 30));
    appendFileSync(target!, text.slice(30));
  }
  process.stdout.write("done\n");
}
