// Child process for the ledger crash test: appends batches of usage rows to a ledger file,
// printing each batch's number once `appendLedgerFile` returned (written and fsynced).
import { appendLedgerFile } from "../../../src/maintenance/usage-ledger-file.ts";

const [path, session] = process.argv.slice(2) as [string, string];
const row = (n: number, i: number) => ({
  sessionId: session,
  cwd: "/w",
  key: `${n}-${i}`,
  timestamp: "2025-06-01T00:00:00.000Z",
  provider: "p",
  model: "m".repeat(200),
  source: "message" as const,
  kind: null,
  tokens: { input: n, output: i, cacheRead: 0, cacheWrite: 0, totalTokens: n + i },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 },
});
for (let n = 0; ; n++) {
  appendLedgerFile(
    path,
    Array.from({ length: 50 }, (_, i) => row(n, i)),
    "2026-01-01T00:00:00.000Z",
  );
  process.stdout.write(`${n}\n`);
}
