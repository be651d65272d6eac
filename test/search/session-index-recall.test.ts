import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { prng } from "../../fixtures/seeded.ts";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { line, message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

const MB = 1 << 20;
/** About 1 MB of build-log text, then `last` as its final word. */
const log = (last: string) => `${"compiling module ok\n".repeat(MB / 20)}error: ${last}`;

const ids = async (index: SessionIndex, query: string) => (await index.search(query, { limit: 100 })).map((h) => h.entryId).sort();

// Issue 34, full recall: no 64 Ki cut; every word of every indexed text is found.
describe("SessionIndex recall (file tree)", () => {
  it("finds words at the end of 1 MB tool outputs, shell runs, spilled artifacts and agent outputs", async () => {
    const root = tempDir("ts-index-recall-");
    const bash = line({
      type: "message",
      id: "b1",
      parentId: null,
      timestamp: "2026-01-01T00:00:03.000Z",
      message: { role: "bashExecution", command: "make", output: log("shellzebra"), exitCode: 1 },
    });
    const path = writeSession(
      join(root, "sessions"),
      "-tmp-r",
      "eeee5555-0000-4000-8000-000000000005",
      "/work/r",
      message("toolResult", log("toolokapi"), { id: "t1" }) +
        bash +
        message("toolResult", "Output too large; stored as artifact://3", { id: "t2" }) +
        message("toolResult", "the subagent wrote agent://review.2", { id: "t3" }),
    );
    const dir = path.slice(0, -".jsonl".length);
    mkdirSync(dir);
    writeFileSync(join(dir, "3.bash.log"), log("artifactquokka"));
    writeFileSync(join(dir, "review.2.md"), log("agentnarwhal"));
    const index = await openSessionIndex({ root });
    opened.push(index);
    expect(await ids(index, "toolokapi")).toEqual(["t1"]);
    expect(await ids(index, "shellzebra")).toEqual(["b1"]);
    expect(await ids(index, "artifactquokka")).toEqual(["t2"]);
    expect(await ids(index, "agentnarwhal")).toEqual(["t3"]);
    const [hit] = await index.search("artifactquokka");
    expect(hit!.snippet).toContain("«artifactquokka»");
  });

  it("finds a plain word in exactly the sessions a scan of the files finds it in (rg's recall)", async () => {
    const root = tempDir("ts-index-recall-rg-");
    const random = prng(34);
    const words = Array.from({ length: 40 }, (_, i) => `w${i.toString(36)}q${(i * 7919).toString(36)}`);
    const tails = ["tailone", "tailtwo", "tailthree"];
    for (let s = 0; s < 12; s++) {
      let body = "";
      for (let e = 0; e < 6; e++) {
        // the last entry is long (past 64 Ki characters), and ends in a word found nowhere else in its session
        const n = e === 5 ? 9000 + Math.floor(random() * 9000) : 5 + Math.floor(random() * 40);
        let text = Array.from({ length: n }, () => words[Math.floor(random() * words.length) ** 2 % words.length]!).join(" ");
        if (e === 5) text += ` ${tails[s % tails.length]}`;
        body += message(e % 2 ? "toolResult" : "user", text, { id: `s${s}e${e}` });
      }
      writeSession(join(root, "sessions"), `-tmp-${s}`, `${s.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`, `/w/${s}`, body);
    }
    const index = await openSessionIndex({ root });
    opened.push(index);
    const files = readdirSync(join(root, "sessions"), { recursive: true, encoding: "utf8" })
      .map((f) => join(root, "sessions", f))
      .filter((f) => f.endsWith(".jsonl") && statSync(f).isFile());
    for (const word of [...words, ...tails]) {
      const scanned = files.filter((f) => new RegExp(`\\b${word}\\b`).test(readFileSync(f, "utf8"))).length;
      const hits = await index.search(`"${word}"`, { limit: 1000 });
      expect(new Set(hits.map((h) => h.sessionId)).size, word).toBe(scanned);
      if (tails.includes(word)) expect(scanned, word).toBeGreaterThan(0);
    }
  });
});
