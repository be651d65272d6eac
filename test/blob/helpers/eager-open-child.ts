// `eager-open-child.ts <root> <sessionFile>`: opens the session eagerly (and writable, so its blob store
// may log proofs) in a fresh process, prints the warning codes and every entry's image data as JSON, closes.
import type { StoreWarning } from "../../../src/errors.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";

const [root, file] = process.argv.slice(2) as [string, string];
const warnings: StoreWarning[] = [];
const m = await SessionManager.open(file, { root, rehydrate: "eager", onWarning: (w) => warnings.push(w) });
const images = m
  .getEntries()
  .flatMap((e) => ((e as { message?: { content?: unknown } }).message?.content as Array<{ type: string; data: string }> | undefined) ?? [])
  .filter((b) => typeof b === "object" && b.type === "image")
  .map((b) => b.data);
process.stdout.write(`${JSON.stringify({ codes: warnings.map((w) => w.code), images })}\n`);
await m.close();
