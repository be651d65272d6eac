import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEntry, SessionHeader } from "../../src/format/types.ts";
import { htmlChunks } from "../../src/interchange/html.ts";
import type { TranscriptSource } from "../../src/interchange/transcript-source.ts";
import { findChromium, HeadlessChromium } from "../support/chromium.ts";
import { tempDir } from "../support/temp-dir.ts";

const chromium = findChromium();
if (chromium === null) {
  if (process.env.CI === "true") throw new Error("Chromium is not installed, and CI=true: the HTML view's browser test must run");
  console.warn("SKIPPED: the HTML view's prototype-id test needs Chromium (apt-get install chromium, or set CHROMIUM_PATH)");
}

function message(id: string, parentId: string | null, text: string): SessionEntry {
  return { type: "message", id, parentId, timestamp: "t", message: { role: "user", content: text } } as unknown as SessionEntry;
}

/**
 * A tree whose ids are Object.prototype's member names: `constructor` forks into `toString`
 * (→ `__proto__`, the leaf shown) and `hasOwnProperty` (→ `valueOf`).
 */
function source(): TranscriptSource {
  return {
    header: { type: "session", version: 3, id: "s1", timestamp: "t", cwd: "/w" } as unknown as SessionHeader,
    entries: [
      message("constructor", null, "Root question."),
      message("toString", "constructor", "First branch."),
      message("hasOwnProperty", "constructor", "Second branch."),
      message("valueOf", "hasOwnProperty", "Second branch, later."),
      message("__proto__", "toString", "First branch, later."),
    ],
    leafId: "__proto__",
    rehydrate: (v) => v,
    artifacts: [],
  };
}

describe.skipIf(chromium === null)("issue 32 #26: HTML view with entry ids named like Object.prototype members", () => {
  let browser: HeadlessChromium;

  beforeAll(async () => {
    const file = join(tempDir(), "proto.html");
    writeFileSync(file, [...htmlChunks(source())].join(""));
    browser = await HeadlessChromium.launch(chromium!);
    await Promise.all([browser.send("Runtime.enable"), browser.send("Page.enable")]);
    const loaded = browser.next("Page.loadEventFired");
    await browser.send("Page.navigate", { url: pathToFileURL(file).href });
    await loaded;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  const visible = () => browser.evaluate("[...document.querySelectorAll('[data-entry]')].filter(e => !e.hidden).map(e => e.dataset.entry)");

  it("shows the branch to the leaf and a fork with two buttons at `constructor`", async () => {
    expect(browser.events.filter((e) => e.method === "Runtime.exceptionThrown")).toEqual([]);
    expect(await visible()).toEqual(["constructor", "toString", "__proto__"]);
    const buttons = await browser.evaluate("[...document.querySelectorAll('nav.fork button')].map(b => [b.dataset.child, b.className])");
    expect(buttons).toEqual([
      ["toString", "current"],
      ["hasOwnProperty", ""],
    ]);
  });

  it("switches to the other branch and back", async () => {
    await browser.evaluate("document.querySelector('nav.fork button:not(.current)').click()");
    expect(await visible()).toEqual(["constructor", "hasOwnProperty", "valueOf"]);
    expect(await browser.evaluate("document.body.getAttribute('data-leaf')")).toBe("valueOf");
    await browser.evaluate("document.querySelector('nav.fork button:not(.current)').click()");
    expect(await visible()).toEqual(["constructor", "toString", "__proto__"]);
  });
});
