import { copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateAtif } from "../../src/interchange/atif-validate.ts";
import { exportSession, type ViewFormat } from "../../src/interchange/export-session.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { sharedData } from "../support/shared-data.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/sessions");
const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".jsonl") && f !== "garbage-header.jsonl");

async function render(file: string, format: ViewFormat): Promise<string> {
  const root = tempDir();
  const copy = join(root, file);
  copyFileSync(join(FIXTURES, file), copy);
  let out = "";
  for await (const chunk of exportSession(copy, { root, format })) out += chunk;
  return out;
}

describe("export views of every bundled session fixture (v1, v2, v3; damaged, unknown types, images)", () => {
  it.each(files)("%s: ATIF that passes the RFC's rules, Markdown and HTML", async (file) => {
    const doc = JSON.parse(await render(file, "atif"));
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.final_metrics.total_steps).toBe(doc.steps.length);
    const html = await render(file, "html");
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.endsWith("</body></html>\n")).toBe(true);
    expect((await render(file, "markdown")).startsWith("# ")).toBe(true);
  });
});

const REAL = sharedData("real-sessions");

describe.runIf(REAL !== null)("export views of real pi transcripts", () => {
  it.each(REAL === null ? [] : readdirSync(REAL))("%s: every message of the branch is a step or an observation", async (file) => {
    const root = tempDir();
    const copy = join(root, file);
    copyFileSync(join(REAL!, file), copy);
    const m = await SessionManager.open(copy, { root, readOnly: true, rehydrate: "lazy" });
    const roles = m.getBranch().flatMap((e) => (e.type === "message" ? [(e.message as { role: string }).role] : []));
    await m.close();
    let out = "";
    for await (const chunk of exportSession(copy, { root, format: "atif" })) out += chunk;
    const doc = JSON.parse(out);
    expect(validateAtif(doc)).toEqual([]);
    const results = doc.steps.reduce((n: number, s: any) => n + (s.observation?.results.length ?? 0), 0);
    const toolResults = roles.filter((r) => r === "toolResult").length;
    expect(toolResults).toBeGreaterThan(0);
    expect(results).toBe(toolResults);
    expect(doc.steps.filter((s: any) => s.source === "agent")).toHaveLength(roles.filter((r) => r === "assistant").length);
    // A user's shell runs (`!cmd`, bashExecution) are the user's side too.
    const userSide = roles.filter((r) => r === "user" || r === "bashExecution" || r === "custom").length;
    expect(doc.steps.filter((s: any) => s.source === "user")).toHaveLength(userSide);
    expect(doc.steps.filter((s: any) => s.extra.role === "bashExecution").every((s: any) => s.message.startsWith("$ "))).toBe(true);
  });
});
