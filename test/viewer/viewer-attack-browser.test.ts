import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startViewer } from "../../src/viewer/server.ts";
import { findChromium } from "../support/chromium.ts";
import { viewerStore } from "./viewer-fixtures.ts";

const binary = findChromium();
if (binary === null) {
  if (process.env.CI === "true") throw new Error("Chromium is not installed, and CI=true: the viewer's browser tests must run");
  console.warn("SKIPPED: the viewer's attack browser tests need Chromium (apt-get install chromium, or set CHROMIUM_PATH)");
}

describe.skipIf(binary === null)("serve under attack, in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: binary!,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("a link with a malformed fragment (#%E0) leaves the page's script working: live updates still start", async () => {
    const s = await viewerStore();
    const viewer = await startViewer({ root: s.root });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    try {
      await page.goto(viewer.url);
      await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.m.sessionId}#%E0%A4%A`);
      await page.waitForLoadState("load");
      expect(errors).toEqual([]);
      await page.locator(".live-status").waitFor();
    } finally {
      await page.close();
      await viewer.close();
    }
  });
});
