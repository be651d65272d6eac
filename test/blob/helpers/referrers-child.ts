// `referrers-child.ts <blobsDir> register <count> <prefix>`: registers `dir` places <prefix>-0 … <prefix>-<count-1>.
// `referrers-child.ts <blobsDir> forget <stopFile>`: registers and forgets one place of its own, over and
// over, until <stopFile> exists; prints "ready" once it has forgotten once, and the number of rounds at the end.
import { existsSync } from "node:fs";
import { forgetReferrers, registerReferrer } from "../../../src/blob/blob-referrers.ts";
import { isStoreError } from "../../../src/errors.ts";

const [blobsDir, mode, a, b] = process.argv.slice(2) as [string, string, string, string];
if (mode === "register") {
  for (let i = 0; i < Number(a); i++) registerReferrer(blobsDir, { kind: "dir", path: `${b}-${i}` });
} else {
  const mine = `${blobsDir}-forget-me`;
  let rounds = 0;
  while (!existsSync(a)) {
    registerReferrer(blobsDir, { kind: "dir", path: mine });
    try {
      forgetReferrers(blobsDir, [mine]);
    } catch (err) {
      if (!isStoreError(err, "STORE_BUSY")) throw err;
    }
    if (rounds++ === 0) process.stdout.write("ready\n");
  }
  process.stdout.write(`${rounds}\n`);
}
