import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningViewer, startViewer } from "../../src/viewer/server.ts";
import { findChromium } from "../support/chromium.ts";
import { viewerStore } from "./viewer-fixtures.ts";

const binary = findChromium();
if (binary === null) {
  // CI installs Chromium (.ci/run): there its absence is a failure, never a skip.
  if (process.env.CI === "true") throw new Error("Chromium is not installed, and CI=true: the viewer's browser tests must run");
  console.warn("SKIPPED: the viewer's browser tests need Chromium (apt-get install chromium, or set CHROMIUM_PATH)");
}
const axeSource: string = createRequire(import.meta.url)("axe-core").source;
/** Screenshots of each view: the test output (printed), and the README's pictures are taken from here. */
const SHOTS = join(tmpdir(), "transcript-store-viewer-screenshots");

describe.skipIf(binary === null)("serve in headless Chromium", () => {
  let browser: Browser;
  let s: Awaited<ReturnType<typeof viewerStore>>;
  let viewer: RunningViewer;
  let page: Page;
  const outside: string[] = [];
  const errors: string[] = [];
  const dialogs: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: binary!,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    console.log(`viewer screenshots: ${SHOTS}`);
  });
  beforeEach(async () => {
    s = await viewerStore();
    viewer = await startViewer({ root: s.root, write: true });
    page = await browser.newPage();
    outside.length = 0;
    errors.length = 0;
    dialogs.length = 0;
    const origin = `http://127.0.0.1:${viewer.port}`;
    page.on("request", (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) outside.push(r.url());
    });
    page.on("pageerror", (err) => errors.push(err.message));
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(viewer.url);
  });
  afterEach(async () => {
    await page.close();
    await viewer.close();
  });

  const pwned = () => page.evaluate("window.__pwned");
  async function axe(): Promise<Array<{ id: string; impact: string; nodes: number }>> {
    const result = (await page.evaluate(`${axeSource}; axe.run(document, { resultTypes: ["violations"] })`)) as {
      violations: Array<{ id: string; impact: string; nodes: unknown[] }>;
    };
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  }

  it("lists every session with its title, cwd, messages and cost; the token left the address bar", async () => {
    expect(new URL(page.url()).search).toBe("");
    const rows = page.locator("table.sessions tbody tr");
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(2);
    const text = await page.locator("table.sessions").innerText();
    expect(text).toContain("Please look.");
    expect(text).toContain("$0.7500");
    expect(text).toContain("<b>bold?</b><script>window.__pwned=7</script>");
    expect(await axe()).toEqual([]);
    await page.screenshot({ path: join(SHOTS, "sessions.png"), fullPage: true });
    expect(outside).toEqual([]);
  });

  it("search as you type shows hits with snippets; a hit is a deep link to its entry", async () => {
    await page.locator("#q").fill("branch answer");
    const hit = page.locator("#hits li a").first();
    await hit.waitFor();
    expect(await page.locator("#hits mark").first().innerText()).toMatch(/branch|answer/i);
    const href = await hit.getAttribute("href");
    expect(href).toMatch(new RegExp(`^/s/${s.m.sessionId}#`));
    await hit.click();
    await page.waitForURL(/\/s\//);
    const entry = decodeURIComponent(href!.split("#")[1]!);
    // the hit may be on a branch the page does not show first: the page then shows the branch leading to it
    await page.locator(`[id="e-${entry}"]`).waitFor({ state: "visible" });
  });

  it("a deep link to an entry on another branch shows that branch", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.m.sessionId}#${s.ids.otherLeaf}`);
    await page.locator(`[id="e-${s.ids.otherLeaf}"]`).waitFor({ state: "visible" });
    expect(new URL(page.url()).searchParams.get("leaf")).toBe(s.ids.otherLeaf);
    expect(await page.locator("#transcript").innerText()).toContain("Other branch answer.");
  });

  it("renders a session readably: Markdown, tool calls by what they did, folded output, images from the blob store, branches", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.m.sessionId}`);
    const transcript = page.locator("#transcript");
    expect(await transcript.locator("details.tool-call summary").first().innerText()).toContain("read /tmp/a.png");
    expect(await transcript.locator("article.role-toolResult h3").first().innerText()).toBe("↳ read /tmp/a.png");
    expect(await transcript.locator("details.thinking").count()).toBe(1);
    const img = transcript.locator("img").first();
    await img.scrollIntoViewIfNeeded();
    await expect.poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth), { timeout: 30_000 }).toBe(24);
    expect(await page.locator("article.role-compaction").count()).toBe(1);
    // the sidebar lists both branches, the shown one marked; the other branch is a link away
    const branches = page.locator("aside.tree li");
    expect(await branches.count()).toBe(2);
    expect(await page.locator('aside.tree li[aria-current="true"]').count()).toBe(1);
    await page.locator("aside.tree li:not(.current) a").click();
    await page.waitForURL(/leaf=/);
    expect(await page.locator("#transcript").innerText()).toContain("Other branch answer.");
    expect(await page.locator("#transcript").innerText()).not.toContain("Active branch follow-up.");
    expect(await axe()).toEqual([]);
    await page.screenshot({ path: join(SHOTS, "session.png"), fullPage: true });
  });

  it("keeps the hostile session inert: no script ran, nothing loaded from outside, prototype-named ids work", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.hostile.id}`);
    await page.locator("#transcript article").first().waitFor();
    expect(await pwned()).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(outside).toEqual([]);
    // our one script, nothing else
    expect(await page.locator("script").count()).toBe(1);
    expect(await page.locator("#transcript a[href^='javascript:'], #transcript a[href^='data:']").count()).toBe(0);
    const ids = await page.locator("#transcript [data-entry]").evaluateAll((els) => els.map((el) => el.getAttribute("data-entry")));
    expect(ids).toEqual(["toString", "constructor", "__proto__"]);
    expect(await page.locator("aside.tree li").count()).toBe(2);
    // the SVG is shown as an image (its script cannot run there); opened on its own it is sandboxed
    const svgUrl = await page.locator("#transcript img").first().getAttribute("src");
    await page.goto(`http://127.0.0.1:${viewer.port}${svgUrl}`);
    expect(await pwned()).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it("folds a long output to its first lines; show all fetches the whole text", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.hostile.id}`);
    const output = page.locator("article.role-toolResult pre.output").first();
    expect(await output.innerText()).toContain("output line 28");
    expect(await output.innerText()).not.toContain("output line 29");
    const showAll = page.locator("a.show-all");
    expect(await showAll.innerText()).toMatch(/^show all \(101 lines, \d+ characters\)$/);
    await showAll.click();
    await expect.poll(() => output.innerText(), { timeout: 30_000 }).toContain("output line 99");
    expect(await pwned()).toBeUndefined();
  });

  it("shows usage and space from the same numbers as the CLI, and compares two branches side by side", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/usage`);
    expect(await page.locator("p.totals").innerText()).toContain("$0.7500");
    expect(await page.locator("figure.chart").count()).toBeGreaterThanOrEqual(4);
    expect(await axe()).toEqual([]);
    await page.screenshot({ path: join(SHOTS, "usage.png"), fullPage: true });
    const a = s.m.sessionId;
    await page.goto(`http://127.0.0.1:${viewer.port}/compare?a=${a}&b=${a}&bleaf=${s.ids.otherLeaf}`);
    expect(await page.locator("table.compare tr.same").count()).toBeGreaterThan(0);
    expect(await page.locator("table.compare tr.differs").count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, "compare.png"), fullPage: true });
  });

  it("is usable from the keyboard: the skip link first, then the navigation, the search box reachable", async () => {
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
    for (let i = 0; i < 10 && (await page.evaluate("document.activeElement?.id")) !== "q"; i++) await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.id")).toBe("q");
  });

  it("updates a session on screen as a writer in another process appends to it", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.m.sessionId}`);
    await page.locator(".live-status").waitFor();
    const script = [
      `import { SessionManager } from ${JSON.stringify(join(process.cwd(), "src/session/session-manager.ts"))};`,
      `const m = await SessionManager.open(${JSON.stringify(s.m.sessionFile)}, { root: ${JSON.stringify(s.root)} });`,
      `m.appendMessage({ role: "user", content: "appended live by another process", timestamp: Date.now() });`,
      "await m.close();",
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: "inherit" });
    await new Promise((resolve) => child.on("exit", resolve));
    await page.locator("#transcript", { hasText: "appended live by another process" }).waitFor({ timeout: 20_000 });
  });

  it("asks before an action: rm from the session page lands in the trash, restore brings it back", async () => {
    await page.goto(`http://127.0.0.1:${viewer.port}/s/${s.m.sessionId}`);
    await page.locator("a.action", { hasText: "rm…" }).click();
    await page.locator("h1", { hasText: "Confirm: rm" }).waitFor();
    await page.locator("button", { hasText: "rm" }).click();
    await page.waitForURL(/\/trash$/);
    expect(await page.locator("table").innerText()).toContain(s.m.sessionId);
    await page.screenshot({ path: join(SHOTS, "trash.png"), fullPage: true });
    await page.locator("a", { hasText: "restore…" }).click();
    await page.locator("button", { hasText: "restore" }).click();
    await page.waitForURL(new RegExp(`/s/${s.m.sessionId}`));
    expect(await page.locator("h1").first().innerText()).toContain("Please look.");
  });
});
