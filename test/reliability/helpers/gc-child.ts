// `gc-child.ts <root>`: one gc with no grace period; prints the hashes it reports deleted (JSON).
import { join } from "node:path";
import { collectGarbage } from "../../../src/maintenance/gc.ts";

const [root] = process.argv.slice(2) as [string];
const report = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
process.stdout.write(JSON.stringify(report.deleted));
