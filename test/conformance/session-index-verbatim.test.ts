import fc from "fast-check";
import { expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { describeBackends } from "./backends.ts";

const NOW = new Date("2026-06-01T12:00:00.000Z");

/** Tokens as people paste them: secrets, keys, error codes, identifiers mixing `_`, `-`, `.`, case and digits. */
const EXACT = [
  "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",
  "sk-ant-abc123XYZ",
  "TS2304",
  "parseStatement",
  "ERR_UNKNOWN_FILE_EXTENSION",
  "XMLHttpRequest",
  "AKIA4EXAMPLE_key-Value.v2",
  "my_var-Name2X",
];

/** One character of a generated token: letters of both cases, digits, the punctuation that joins code words, a few accented letters. */
const CHAR = fc.constantFrom(..."aAbBxXyYzZ019_-./:éÉßø".split(""));
/** A token (no whitespace, quote or `*`: those are query syntax) holding at least one letter or digit. */
const TOKEN = fc
  .array(CHAR, { minLength: 1, maxLength: 24 })
  .map((cs) => cs.join(""))
  .filter((t) => /[\p{L}\p{N}]/u.test(t));

// Issue 34, recall: a token written in a message is found by searching it verbatim, on both backends.
describeBackends("SessionIndex finds a token searched verbatim (issue 34)", { needs: ["index"] }, (backend) => {
  it("finds secrets, keys and error codes that mix `_`/`-` with case and digits", async () => {
    const options = await backend.options();
    const s = await SessionManager.create("/work/verbatim", options);
    const entry = s.appendMessage({ role: "user", content: `look: ${EXACT.join(" ")} end`, timestamp: 1 });
    s.appendMessage({ role: "user", content: "an unrelated message about ghp and sk", timestamp: 2 });
    await s.flush();
    const index = await openSessionIndex(options);
    try {
      for (const token of EXACT) {
        const hits = await index.search(token, { now: NOW, limit: 20 });
        expect({ token, ids: hits.map((h) => h.entryId) }).toEqual({ token, ids: [entry] });
        const quoted = await index.search(`"${token}"`, { now: NOW, limit: 20 });
        expect({ token, ids: quoted.map((h) => h.entryId) }).toEqual({ token, ids: [entry] });
      }
    } finally {
      await index.close();
      await s.close();
    }
  });

  it("property: any token written in a message is found by searching it verbatim", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(TOKEN, { minLength: 1, maxLength: 12 }), async (tokens) => {
        const options = await backend.options();
        const s = await SessionManager.create("/work/property", options);
        const written = tokens.map((t, i) => s.appendMessage({ role: "user", content: `#${i} ${t} .`, timestamp: i + 1 }));
        await s.flush();
        const index = await openSessionIndex(options);
        try {
          for (const [i, token] of tokens.entries()) {
            for (const query of [token, `"${token}"`]) {
              const hits = await index.search(query, { now: NOW, limit: 1000, session: s.sessionId });
              expect({ query, found: hits.some((h) => h.entryId === written[i]) }).toEqual({ query, found: true });
            }
          }
        } finally {
          await index.close();
          await s.close();
        }
      }),
      { numRuns: 15, seed: 34 },
    );
  });
});
