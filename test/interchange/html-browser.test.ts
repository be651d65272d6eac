import { copyFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSession } from "../../src/interchange/export-session.ts";
import { viewOf } from "../../src/interchange/message-parts.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { findChromium, HeadlessChromium } from "../support/chromium.ts";
import { sharedData } from "../support/shared-data.ts";
import { tempDir } from "../support/temp-dir.ts";
import { viewsSession } from "./views-session.ts";

const chromium = findChromium();
if (chromium === null) {
  // CI installs Chromium (.ci/run): there its absence is a failure, never a skip.
  if (process.env.CI === "true") throw new Error("Chromium is not installed, and CI=true: the HTML export's browser test must run");
  console.warn("SKIPPED: the HTML export's browser test needs Chromium (apt-get install chromium, or set CHROMIUM_PATH)");
}

describe.skipIf(chromium === null)("the HTML export in headless Chromium", () => {
  let browser: HeadlessChromium;
  let s: Awaited<ReturnType<typeof viewsSession>>;
  let url: string;

  beforeAll(async () => {
    s = await viewsSession();
    let html = "";
    for await (const chunk of exportSession(s.m.sessionFile!, { root: s.root, format: "html" })) html += chunk;
    const file = join(tempDir(), "session.html");
    writeFileSync(file, html);
    url = pathToFileURL(file).href;
    browser = await HeadlessChromium.launch(chromium!);
    await Promise.all([
      browser.send("Network.enable"),
      browser.send("Runtime.enable"),
      browser.send("Log.enable"),
      browser.send("Page.enable"),
    ]);
    const loaded = browser.next("Page.loadEventFired");
    await browser.send("Page.navigate", { url });
    await loaded;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("renders the active branch: every message of it visible, the other branch not", async () => {
    const text: string = await browser.evaluate("document.body.innerText");
    for (const t of [
      "Please look.",
      "Reading it now.",
      "Active branch answer.",
      "Summary of the work so far.",
      "Active branch follow-up.",
      "Active branch last word.",
    ])
      expect(text).toContain(t);
    expect(text).not.toContain("Other branch answer.");
    // The hostile strings are text on the page, not markup: the title was not changed by them.
    expect(text).toContain("</script><script>document.title='pwned'</script>");
    expect(await browser.evaluate("document.title")).not.toBe("pwned");
    expect(await browser.evaluate("document.querySelectorAll('img[src^=\"x\"]').length")).toBe(0);
  });

  it("loads the image from its data: URL", async () => {
    const images: Array<[boolean, number]> = await browser.evaluate(
      "[...document.images].filter(i => !i.closest('[hidden]')).map(i => [i.complete, i.naturalWidth])",
    );
    expect(images).toEqual([[true, 24]]);
  });

  it("toggles a tool call's details open and shut", async () => {
    const states = await browser.evaluate(`(() => {
      const d = document.querySelector("details.tool-call");
      const before = d.open;
      d.querySelector("summary").click();
      const opened = d.open;
      d.querySelector("summary").click();
      return [before, opened, d.open];
    })()`);
    expect(states).toEqual([false, true, false]);
  });

  it("switches to the other branch at the fork", async () => {
    const forks = await browser.evaluate("[...document.querySelectorAll('nav.fork button')].map(b => [b.textContent, b.className])");
    expect(forks).toEqual([
      ["1", "current"],
      ["2", ""],
    ]);
    await browser.evaluate("document.querySelector('nav.fork button:not(.current)').click()");
    const text: string = await browser.evaluate("document.body.innerText");
    expect(text).toContain("Other branch question.");
    expect(text).toContain("Other branch answer.");
    expect(text).not.toContain("Active branch answer.");
    expect(text).toContain("Reading it now.");
    expect(await browser.evaluate("document.body.getAttribute('data-leaf')")).toBe(s.ids.otherLeaf);
  });

  it("follows a link to an embedded artifact within the page", async () => {
    await browser.evaluate(`document.querySelector('a[href="#artifact-0"]').click()`);
    expect(await browser.evaluate("location.hash")).toBe("#artifact-0");
    expect(await browser.evaluate("document.querySelector('#artifact-0 summary').textContent")).toContain("build-log");
  });

  it("logged no console error and made no request but the page itself", () => {
    const errors = browser.events.filter(
      (e) =>
        (e.method === "Runtime.consoleAPICalled" && e.params.type === "error") ||
        e.method === "Runtime.exceptionThrown" ||
        (e.method === "Log.entryAdded" && e.params.entry.level === "error"),
    );
    expect(errors).toEqual([]);
    const requests = browser.events.filter((e) => e.method === "Network.requestWillBeSent").map((e) => e.params.request.url as string);
    // data: URLs are decoded in the page, not fetched: everything else must be the file itself.
    expect(requests.filter((u) => !u.startsWith("data:"))).toEqual([url]);
    expect(browser.events.some((e) => e.method === "Network.loadingFailed")).toBe(false);
  });
});

const REAL = chromium === null ? null : sharedData("real-sessions");

describe.skipIf(chromium === null || REAL === null)("real pi transcripts as HTML in headless Chromium", () => {
  it.each(REAL === null ? [] : readdirSync(REAL))(
    "%s: every readable entry of the branch shows, nothing else is requested, no console error",
    async (file) => {
      const root = tempDir();
      const copy = join(root, file);
      copyFileSync(join(REAL!, file), copy);
      let html = "";
      for await (const chunk of exportSession(copy, { root, format: "html" })) html += chunk;
      const page = join(root, "page.html");
      writeFileSync(page, html);
      const m = await SessionManager.open(copy, { root, readOnly: true, rehydrate: "lazy" });
      const shown = m.getBranch().filter((e) => viewOf(e) !== null).length;
      await m.close();
      const real = await HeadlessChromium.launch(chromium!);
      try {
        await Promise.all([real.send("Network.enable"), real.send("Runtime.enable"), real.send("Log.enable"), real.send("Page.enable")]);
        const loaded = real.next("Page.loadEventFired");
        await real.send("Page.navigate", { url: pathToFileURL(page).href });
        await loaded;
        expect(await real.evaluate("document.querySelectorAll('article.entry:not([hidden])').length")).toBe(shown);
        const problems = real.events.filter(
          (e) =>
            (e.method === "Runtime.consoleAPICalled" && e.params.type === "error") ||
            e.method === "Runtime.exceptionThrown" ||
            (e.method === "Log.entryAdded" && e.params.entry.level === "error"),
        );
        expect(problems).toEqual([]);
        const requests = real.events.filter((e) => e.method === "Network.requestWillBeSent").map((e) => e.params.request.url as string);
        expect(requests.filter((u) => !u.startsWith("data:"))).toEqual([pathToFileURL(page).href]);
      } finally {
        await real.close();
      }
    },
    60_000,
  );
});
