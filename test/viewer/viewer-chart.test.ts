import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VIEWER_CSS } from "../../src/viewer/assets.ts";
import { barChart, money } from "../../src/viewer/page.ts";
import { findChromium } from "../support/chromium.ts";

const binary = findChromium();
if (binary === null) {
  if (process.env.CI === "true") throw new Error("Chromium is not installed, and CI=true: the viewer's chart test must run");
  console.warn("SKIPPED: the viewer's chart test needs Chromium (apt-get install chromium, or set CHROMIUM_PATH)");
}

describe("the viewer's money and bar charts (a store of several hundred sessions)", () => {
  it("money: four decimals under a dollar, cents from a dollar up (as `usage` prints totals)", () => {
    expect(money(0.75)).toBe("$0.7500");
    expect(money(478.6133)).toBe("$478.61");
    expect(money(1)).toBe("$1.00");
    expect(money(null)).toBe("unpriced");
  });
});

describe.skipIf(binary === null)("a bar chart in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: binary!, args: ["--no-sandbox", "--disable-gpu"] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("draws every value's text inside the picture, the longest bar's included", async () => {
    const rows = [
      { label: "2026-11-28", value: 478.6133, text: `${money(478.6133)} · ${(691011143).toLocaleString("en")} tokens` },
      { label: "/home/me/proj/a-rather-long-project-directory-name", value: 17.98, text: "$17.98 · 26,149,946 tokens" },
    ];
    const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
    await page.setContent(`<!doctype html><style>${VIEWER_CSS}</style><main>${barChart("Cost per day", rows)}</main>`);
    // (a string: the test's types have no DOM) each text's box, and the picture's width
    const overflow = (await page.evaluate(`(() => {
      const svg = document.querySelector("svg");
      const width = svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll("text")].map((t) => {
        const box = t.getBBox();
        return { text: t.textContent, left: box.x, right: box.x + box.width, width };
      });
    })()`)) as Array<{ text: string | null; left: number; right: number; width: number }>;
    await page.close();
    expect(overflow.length).toBe(4);
    for (const t of overflow) {
      expect(t.left, t.text ?? "").toBeGreaterThanOrEqual(0);
      expect(t.right, t.text ?? "").toBeLessThanOrEqual(t.width);
    }
  });
});
