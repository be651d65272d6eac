// A process that opens a PostgreSQL session (read-only or as its writer) and stays alive until it
// is killed. Argument: JSON { url, sessionId, readOnly }. Prints `dir <artifacts dir>` once open,
// then `hash <sha256> <size>` for the file named by `hash` (streamed, never one string), if asked,
// and `maxrss <bytes>`: the most memory the process held.
// `exit`: close and end; `exitWithoutClose`: process.exit(0) with the session still open.
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { PostgresBackend, SessionManager } from "../../../../src/index.ts";

const args = JSON.parse(process.argv[2]!) as {
  url: string;
  sessionId: string;
  readOnly: boolean;
  hash?: string;
  exit?: boolean;
  exitWithoutClose?: boolean;
};
const backend = PostgresBackend.of(args.url);
const m = await SessionManager.open(args.sessionId, { store: backend, readOnly: args.readOnly });
const dir = m.artifacts!.dir;
process.stdout.write(`dir ${dir}\n`);
if (args.hash !== undefined) {
  const hash = createHash("sha256");
  const fd = openSync(join(dir, args.hash), "r");
  const buf = Buffer.alloc(1 << 20);
  let size = 0;
  for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
    hash.update(buf.subarray(0, n));
    size += n;
  }
  closeSync(fd);
  process.stdout.write(`hash ${hash.digest("hex")} ${size}\n`);
  process.stdout.write(`maxrss ${process.resourceUsage().maxRSS * 1024}\n`);
}
if (args.exitWithoutClose) {
  process.exit(0);
} else if (args.exit) {
  await m.close();
  await backend.close();
} else {
  setInterval(() => {}, 60_000);
}
