import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isRecord } from "../../src/format/types.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { sharedData } from "../support/shared-data.ts";
import { tempDir } from "../support/temp-dir.ts";

const REAL = sharedData("real-sessions");
const files = ["pi-v1-before-compaction.jsonl", "pi-v1-large-session.jsonl"];

/** All text of an entry's message, lower-cased (what a hit's entry must contain). */
function textOf(entry: Record<string, unknown>): string {
  const message = entry.message;
  if (!isRecord(message)) return "";
  return JSON.stringify(message).toLowerCase();
}

describe.runIf(REAL !== null)("SessionIndex over real pi transcripts", () => {
  it("indexes them whole, and each hit's entry id is the one the session manager gives that entry", async () => {
    const root = tempDir("ts-index-real-");
    const bucket = join(root, "sessions", "-tmp-real");
    mkdirSync(bucket, { recursive: true });
    const paths = files.map((name) => {
      copyFileSync(join(REAL!, name), join(bucket, name));
      return join(bucket, name);
    });
    const index = await openSessionIndex({ root });
    try {
      const report = await index.refresh();
      expect(report).toMatchObject({ sessionsAdded: 2, malformedLines: 0 });
      expect(report.bytesRead).toBe(paths.reduce((n, p) => n + statSync(p).size, 0));
      for (const query of ["selector", '"theme tokens"', "compact*"]) {
        const hits = await index.search(query, { limit: 50 });
        expect(hits.length).toBeGreaterThan(0);
        for (const hit of hits) {
          const manager = await SessionManager.open(hit.location, { root, readOnly: true });
          const entry = manager.getEntries().find((e) => e.id === hit.entryId);
          expect(entry, `${query}: ${hit.entryId} of ${hit.location}`).toBeDefined();
          expect(entry!.timestamp).toBe(hit.timestamp);
          const word = query.replace(/["*]/g, "").split(" ")[0]!;
          expect(textOf(entry as Record<string, unknown>)).toContain(word);
        }
      }
    } finally {
      await index.close();
    }
  });
});
