// `pi-child.ts <op> <path> <dir>`: one pi SessionManager workload in a fresh process; prints {ms, maxRssMB}.
import { PI_MODULE } from "./pi-module.ts";

const [op, path, dir] = process.argv.slice(2) as [string, string, string];
const { SessionManager } = (await import(PI_MODULE)) as { SessionManager: any };
const start = performance.now();
if (op === "open") {
  const m = SessionManager.open(path, dir);
  if (m.getEntries().length === 0) throw new Error("empty");
} else {
  throw new Error(`unknown op ${op}`);
}
process.stdout.write(`${JSON.stringify({ ms: performance.now() - start, maxRssMB: process.resourceUsage().maxRSS / 1024 })}\n`);
