import { resolve } from "node:path";
import type { PrepareStage } from "../prepare/pipeline.ts";
import { describeCounts, type RedactionCounts, redactSecretsStage, SecretRedactor } from "../prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../prepare/secret-rules.ts";
import { defaultRoot } from "../session/paths.ts";
import { RedactionKeySlot } from "../crypto/redaction-key-slot.ts";
import { readStoreSettings } from "../session/store-settings.ts";
import type { CommandContext } from "./context.ts";
import { TranscriptStoreError } from "../errors.ts";
import { setSessionEncryption } from "../maintenance/encrypt-file.ts";

/** Whether a write command redacts: `--redact`, else the store's `redact` setting (`<root>/config.json`). */
export function redactsOnWrite(ctx: CommandContext): boolean {
  return ctx.values.redact === true || readStoreSettings(ctx.root !== undefined ? resolve(ctx.root) : defaultRoot()).redact;
}

/**
 * The redaction stage of `migrate --redact` (the built-in rules, markers under the store's key) and
 * the counts it found, per rule; `describe` is the one line a report ends with.
 */
export function writeRedaction(ctx: CommandContext): { stage: PrepareStage; found: RedactionCounts; describe: () => string } {
  const slot = RedactionKeySlot.resolve(undefined, ctx.root !== undefined ? resolve(ctx.root) : defaultRoot());
  const found: RedactionCounts = new Map();
  const stage = redactSecretsStage(new SecretRedactor(BUILTIN_SECRET_RULES, () => slot.get()), (_entry, counts) => {
    for (const [rule, n] of counts) found.set(rule, (found.get(rule) ?? 0) + n);
  });
  return { stage, found, describe: () => (found.size === 0 ? "redacted: no secrets found" : `redacted: ${describeCounts(found)}`) };
}

/** Whether the store encrypts new sessions (`encrypt: true` in `<root>/config.json`). */
export function encryptsNewSessions(ctx: CommandContext): boolean {
  return readStoreSettings(ctx.root !== undefined ? resolve(ctx.root) : defaultRoot()).encrypt;
}

/**
 * Seals a session file a command just created in clear (`import`): with the store key, else
 * `KEY_REQUIRED` when the store encrypts new sessions (the session is left, in clear, to encrypt).
 */
export async function sealImported(ctx: CommandContext, path: string): Promise<void> {
  const key = ctx.key();
  if (key === null)
    throw new TranscriptStoreError(
      "KEY_REQUIRED",
      `This store encrypts new sessions: pass --key-file (the imported session ${path} is in clear until encrypt seals it)`,
      { path },
    );
  await setSessionEncryption(path, "encrypt", { key, blobsDir: ctx.dirs.blobsDir });
}

/**
 * Before a command writes new sessions into the file store (`unbundle`, `fork`): whether to seal
 * them (a store key given, or a store that encrypts new sessions); `KEY_REQUIRED` before anything is
 * written when the store encrypts new sessions and no key was given.
 */
export function sealsNewSessions(ctx: CommandContext): boolean {
  if (ctx.store !== undefined) return false;
  const encrypts = encryptsNewSessions(ctx);
  if (encrypts && ctx.key() === null)
    throw new TranscriptStoreError("KEY_REQUIRED", "This store encrypts new sessions (config.json encrypt: true): pass --key-file");
  return encrypts || ctx.key() !== null;
}
