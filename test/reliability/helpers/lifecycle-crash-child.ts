// Child for the lifecycle crash matrix: `lifecycle-crash-child.ts <op> <root> <ref>` runs one
// lifecycle operation (or `unbundle <root> <bundle file>`) and SIGKILLs itself just before its Nth
// effectful I/O call (TS_KILL_AT=N). Prints "done" when no kill was due.
import { unbundle } from "../../../src/bundle/bundle-restore.ts";
import { Lifecycle } from "../../../src/lifecycle/lifecycle.ts";
import { killAtNthEffect } from "./kill-at.ts";

const [op, root, ref] = process.argv.slice(2) as [string, string, string];
const life = Lifecycle.open({ root });
killAtNthEffect(Number(process.env.TS_KILL_AT ?? -1));
if (op === "rm") for (const id of ref.split(",")) await life.rm(id);
else if (op === "restore") for (const id of ref.split(",")) await life.restore(id);
else if (op === "purge") await life.purge({ all: true });
else if (op === "prune") await life.prune({ maxTotalBytes: 0 });
else if (op === "unbundle") await unbundle(ref, { root });
else throw new Error(`unknown op ${op}`);
process.stdout.write("done\n");
process.exit(0);
