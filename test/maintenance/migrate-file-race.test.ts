import { appendFileSync, copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/sessions");
const late = (n: number) => {
  const message = { role: "user", content: `late ${n}` };
  return `${JSON.stringify({ type: "message", id: `1a7e00${n}0`, parentId: null, timestamp: "t", message })}\n`;
};

describe("migrate --in-place racing a plain writer (pi appends without our lock)", () => {
  for (const backup of [false, true]) {
    it(`keeps a line appended to the old file while it is replaced${backup ? " (--backup)" : ""}`, async () => {
      const dir = tempDir();
      const path = join(dir, "s.jsonl");
      copyFileSync(join(FIXTURES, "v2-hook-message.jsonl"), path);
      let appended = 0;
      // pi's appendFileSync opens the name and writes: just before the rename, that is the old file.
      const restore = injectFault("renameSync", (_c, args) => {
        if (args[1] === path && appended === 0) appendFileSync(path, late(++appended));
        return undefined;
      });
      let report;
      try {
        report = await migrateFile(path, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs"), inPlace: true, backup });
      } finally {
        restore();
      }
      expect(appended).toBe(1);
      expect(report.status).toBe("migrated");
      const text = readFileSync(path, "utf8");
      expect(text.endsWith(late(1))).toBe(true);
      expect(report.linesCaughtUp).toBe(1);
      expect(text.split("\n")[0]).toContain('"version":3');
      if (backup) expect(readdirSync(dir)).toContain("s.jsonl.bak");
    });
  }
});
