import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { type RunningViewer, startViewer } from "../../src/viewer/server.ts";
import { findChromium } from "../support/chromium.ts";
import { makePng } from "../support/png.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { HOSTILE_VIEW } from "./viewer-fixtures.ts";
import { http, login } from "./viewer-http.ts";

const binary = findChromium();

describe.skipIf(!pgCluster() || binary === null)("serve over a PostgreSQL store", () => {
  let backend: PostgresBackend;
  let viewer: RunningViewer;
  let browser: Browser;
  let id: string;
  beforeAll(async () => {
    backend = PostgresBackend.of(await freshDatabase());
    const m = await SessionManager.create("/work/pg-proj", { store: backend });
    m.appendMessage({ role: "user", content: `Where is the flaky parser test? ${HOSTILE_VIEW.script}`, timestamp: 1 });
    m.appendMessage({
      role: "assistant",
      model: "claude-test-1",
      provider: "anthropic",
      content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "npm test -- parser" } }],
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { total: 0.125 } },
      timestamp: 2,
    });
    m.appendMessage({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [
        { type: "text", text: "1 failing: parser handles nested quotes" },
        { type: "image", data: makePng(24, 16, 3).toString("base64"), mimeType: "image/png" },
      ],
      isError: true,
      timestamp: 3,
    });
    await m.close();
    id = m.sessionId;
    viewer = await startViewer({ store: backend });
    browser = await chromium.launch({
      executablePath: binary!,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    await backend?.close();
  });

  it("lists, searches and renders a database session, its image read back from the database's blobs", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(viewer.url);
      expect(await page.locator("table.sessions").innerText()).toContain("Where is the flaky parser test?");
      expect(await page.locator("table.sessions").innerText()).toContain("$0.1250");
      await page.locator("#q").fill("nested quotes");
      await page.locator("#hits li a").first().click();
      await page.waitForURL(new RegExp(`/s/${id}#`));
      expect(await page.locator("article.role-toolResult h3").innerText()).toBe("↳ $ npm test -- parser");
      const img = page.locator("#transcript img").first();
      await expect.poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth), { timeout: 30_000 }).toBe(24);
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
    } finally {
      await page.close();
    }
  });

  it("refuses without the token and with a foreign Host, as over files", async () => {
    const base = `http://127.0.0.1:${viewer.port}`;
    expect((await http(`${base}/s/${id}`)).status).toBe(401);
    const cookie = await login(viewer.url);
    expect((await http(`${base}/s/${id}`, { cookie, host: "rebind.example" })).status).toBe(421);
    expect((await http(`${base}/s/${id}`, { cookie })).status).toBe(200);
  });

  it("follows a database session live as another writer appends, and pins it through a confirmed action", async () => {
    const rw = await startViewer({ store: backend, write: true });
    const page = await browser.newPage();
    try {
      await page.goto(rw.url);
      await page.goto(`http://127.0.0.1:${rw.port}/s/${id}`);
      await page.locator(".live-status").waitFor();
      const writer = await SessionManager.open(id, { store: backend });
      writer.appendMessage({ role: "user", content: "appended to the database while the page follows it", timestamp: 4 });
      await writer.close();
      await page.locator("#transcript", { hasText: "appended to the database while the page follows it" }).waitFor({ timeout: 20_000 });
      await page.getByRole("link", { name: "pin…", exact: true }).click();
      await page.locator("h1", { hasText: "Confirm: pin" }).waitFor();
      await page.getByRole("button", { name: "pin", exact: true }).click();
      await page.waitForURL(new RegExp(`/s/${id}$`));
      const listed = (await SessionManager.listAll({ store: backend })).find((x) => x.id === id);
      expect(listed?.pinned).toBe(true);
    } finally {
      await page.close();
      await rw.close();
    }
  });
});
