import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { prng } from "../../fixtures/seeded.ts";
import { openSessionIndex, type SearchHit, type SessionIndex } from "../../src/search/session-index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

const ALL_ROLES = ["user", "assistant", "toolResult", "thinking"] as const;
const WORDS = ["parser", "lexer", "token", "crash", "stack", "heap", "query", "index", "merge", "branch", "commit", "rebase"];

/** Two sessions of 80 messages each, every text a distinct mix (so BM25 scores rarely tie). */
function corpus(): string {
  const root = tempDir("ts-index-shapes-");
  const random = prng(5);
  for (const s of [1, 2]) {
    let body = "";
    for (let i = 0; i < 80; i++) {
      const words = Array.from({ length: 3 + Math.floor(random() * 30) }, () => WORDS[Math.floor(random() * WORDS.length)]!);
      if (i % 7 === 0) words.push("empty", "input");
      body += message(i % 2 ? "user" : "assistant", words.join(" "), { id: `s${s}m${i.toString().padStart(2, "0")}` });
    }
    writeSession(join(root, "sessions"), `-tmp-${s}`, `${s}${s}${s}${s}1111-0000-4000-8000-000000000001`, `/w/${s}`, body);
  }
  return root;
}

const shape = (hits: SearchHit[]) => hits.map((h) => [h.entryId, h.score.toFixed(9), h.snippet]);

describe("SessionIndex search, with and without filters", () => {
  it("gives the same hits in the same order, ranked and newest first, whether or not a filter that keeps everything is given", async () => {
    const root = corpus();
    for (const maxRankedMatches of [5000, 10]) {
      const index = await openSessionIndex({ root, maxRankedMatches });
      opened.push(index);
      for (const query of ["parser", "crash stack", '"empty input"', "reb*", "token query merge"]) {
        for (const limit of [1, 7, 200]) {
          const now = new Date("2026-06-01T00:00:00Z");
          const plain = await index.search(query, { limit, now });
          const filtered = await index.search(query, { limit, now, roles: [...ALL_ROLES] });
          expect(plain.length, query).toBeGreaterThan(0);
          expect(shape(plain), `${query} limit ${limit} maxRanked ${maxRankedMatches}`).toEqual(shape(filtered));
        }
      }
    }
  });
});
