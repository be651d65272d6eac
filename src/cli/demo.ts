import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StoreWarning } from "../errors.ts";
import { SessionManager } from "../session/session-manager.ts";
import type { CliIo } from "./main.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/sessions");

/** `demo`: copies the bundled fixtures into a fresh temporary store, opens (migrates, repairs) each and reports. */
export async function runDemo(_argv: string[], io: CliIo): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), "transcript-store-demo-"));
  try {
    const work = join(root, "legacy");
    mkdirSync(work, { recursive: true, mode: 0o700 });
    const names = readdirSync(FIXTURES).filter((n) => n.endsWith(".jsonl")).sort();
    const rows: string[][] = [];
    let problems = 0;
    for (const name of names) {
      const path = join(work, name);
      copyFileSync(join(FIXTURES, name), path);
      const before = statSync(path).size;
      const warnings: StoreWarning[] = [];
      try {
        const m = await SessionManager.open(path, { root, onWarning: (w) => warnings.push(w) });
        const r = m.loadReport;
        await m.close();
        rows.push([name, `v${r.migratedFrom ?? 3}→v3`, String(before), String(statSync(path).size), String(r.entries), String(r.malformed.length), r.tornTail ? "repaired" : "-"]);
      } catch (err) {
        const code = (err as { code?: string }).code ?? "ERROR";
        rows.push([name, code, String(before), String(before), "-", "-", "-"]);
        if (code !== "BAD_HEADER") problems++;
      }
    }
    const blobs = safeCount(join(root, "blobs"));
    const head = ["file", "version", "bytes before", "bytes after", "entries", "malformed", "torn tail"];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
    io.stdout(`${line(head)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${rows.map(line).join("\n")}\n\n${blobs} blob(s) in the store\n`);
    return problems === 0 ? 0 : 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function safeCount(dir: string): number {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
}
