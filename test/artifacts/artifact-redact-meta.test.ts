import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportSession } from "../../src/interchange/export-session.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const GH = "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";

/** Every `.meta.json` of an artifacts directory, as text. */
function metaText(dir: string): string {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".meta.json"))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}

/** Saves artifacts whose summary and name (given, or read from the content) hold a secret. */
function saveLeaky(m: SessionManager): void {
  const store = m.artifacts!;
  store.save("plain output\n", { toolType: "bash", summary: `ran deploy with ${GH}`, name: `deploy-${GH}` });
  store.save(Buffer.from(`${GH} raw bytes`), { toolType: "bin" });
  const w = store.createWriter("bash", { summary: `streamed ${GH}`, name: `stream-${GH}` });
  w.write("streamed output\n");
  w.finish();
}

describe("issue 32 #11: artifact summary and name under redaction", () => {
  it('redact: "secrets" scrubs a given summary and name, and a byte artifact\'s summary, on write', async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root, redact: "secrets" });
    m.appendMessage({ role: "user", content: "hi" });
    saveLeaky(m);
    await m.close();
    const meta = metaText(m.artifactsDir!);
    expect(meta).not.toContain(GH);
    expect(meta).toContain("[REDACTED:github-token:");
  });

  it("the redact command scrubs summary and name of stored artifacts (byte artifacts' metadata too)", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "hi" });
    saveLeaky(m);
    await m.close();
    expect(metaText(m.artifactsDir!)).toContain(GH);
    const run = await cli(["redact", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(metaText(m.artifactsDir!)).not.toContain(GH);
    const reopened = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
    expect(JSON.stringify(reopened.artifacts!.list())).not.toContain(GH);
    await reopened.close();
  });

  it("the redacted HTML and Markdown views never print them in clear", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "hi" });
    saveLeaky(m);
    await m.close();
    for (const format of ["html", "markdown"] as const) {
      let out = "";
      for await (const chunk of exportSession(m.sessionFile!, { root, format })) out += chunk;
      expect(out, format).not.toContain(GH);
      expect(out, format).toContain("REDACTED:github-token:"); // Markdown writes its brackets as &#91; &#93; in a <summary>
    }
  });
});
