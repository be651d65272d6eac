// Child for the lifecycle crash matrix: `lifecycle-crash-child.ts <op> <root> <ref>` runs one
// lifecycle operation (or `unbundle <root> <bundle file>`, `import-claude-code <root> <file>`,
// `redact <root> <session file>`, `rekey <root> <session file>`: keys KEY_A → KEY_B below) and
// SIGKILLs itself just before its Nth effectful I/O call (TS_KILL_AT=N). Prints "done" when no kill was due.
import { unbundle } from "../../../src/bundle/bundle-restore.ts";
import { join } from "node:path";
import { importClaudeCode } from "../../../src/interchange/import-foreign.ts";
import { Lifecycle } from "../../../src/lifecycle/lifecycle.ts";
import { redactSessionFile } from "../../../src/maintenance/redact-file.ts";
import { rekeySessionFile } from "../../../src/maintenance/rekey.ts";
import { SecretRedactor } from "../../../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../../../src/prepare/secret-rules.ts";
import { keyIdOf } from "../../../src/crypto/line-cipher.ts";
import { killAtNthEffect } from "./kill-at.ts";

const [op, root, ref] = process.argv.slice(2) as [string, string, string];
/** The fixed keys of the redact and rekey rounds (crash-matrix-import.test.ts uses the same). */
const REDACTION_KEY = Buffer.alloc(32, 7);
const KEY_A = Buffer.alloc(32, 1);
const KEY_B = Buffer.alloc(32, 2);
const life = Lifecycle.open({ root });
killAtNthEffect(Number(process.env.TS_KILL_AT ?? -1));
if (op === "rm") for (const id of ref.split(",")) await life.rm(id);
else if (op === "restore") for (const id of ref.split(",")) await life.restore(id);
else if (op === "purge") await life.purge({ all: true });
else if (op === "prune") await life.prune({ maxTotalBytes: 0 });
else if (op === "unbundle") await unbundle(ref, { root });
else if (op === "import-claude-code") await importClaudeCode(ref, { root });
else if (op === "redact") {
  const redactor = new SecretRedactor(BUILTIN_SECRET_RULES, () => REDACTION_KEY);
  await redactSessionFile(ref, { redactor, sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs") });
} else if (op === "rekey")
  await rekeySessionFile(ref, {
    from: { key: KEY_A, keyId: keyIdOf(KEY_A) },
    to: { key: KEY_B, keyId: keyIdOf(KEY_B) },
    blobsDir: join(root, "blobs"),
  });
else throw new Error(`unknown op ${op}`);
process.stdout.write("done\n");
process.exit(0);
