import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { tempDir } from "../support/temp-dir.ts";

const GH = "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";
const AWS = "AKIAZZZZZZZZZZZZZZZZ";

/** Every file of the artifacts directory, as text. */
function allBytes(dir: string): string {
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "latin1"))
    .join("\n");
}

describe("artifacts of a session with redact", () => {
  it("redacts text and JSON artifacts, streamed artifacts (across chunks) and agent outputs; bytes stay as given", async () => {
    const root = tempDir();
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.create(root, { root, redact: "secrets", onWarning: (w) => warnings.push(w) });
    m.appendMessage({ role: "user", content: "hi" });
    const store = m.artifacts!;
    const text = store.save(`export GITHUB_TOKEN=${GH}\n`, { toolType: "bash" });
    const json = store.save({ env: { token: GH }, id: GH }, { toolType: "read" });
    const writer = store.createWriter("bash");
    writer.write(`first line\nkey ${GH.slice(0, 20)}`);
    writer.write(Buffer.from(`${GH.slice(20)} é done\n`, "utf8"));
    const streamed = writer.finish();
    const output = store.saveAgentOutput("reviewer", `# Review\nfound ${AWS} in config\n`);
    const raw = store.save(Buffer.from(GH), { toolType: "bin" });
    await m.close();

    const dir = m.artifactsDir!;
    const redactedText = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith(`${text.id}.`) && f.endsWith(".log"))!), "utf8");
    expect(redactedText).toMatch(/^export GITHUB_TOKEN=\[REDACTED:[a-z-]+:[0-9a-f]{8}\]\n$/);
    const jsonFile = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith(`${json.id}.`) && f.endsWith(".log"))!), "utf8");
    const parsed = JSON.parse(jsonFile);
    expect(parsed.id).toBe(parsed.env.token); // an id holding a secret is redacted like any string (issue 32 #12)
    expect(parsed.env.token).toMatch(/^\[REDACTED:github-token:[0-9a-f]{8}\]$/);
    const streamFile = readFileSync(
      join(dir, readdirSync(dir).find((f) => f.startsWith(`${streamed.id}.`) && f.endsWith(".log"))!),
      "utf8",
    );
    expect(streamFile).toMatch(/^first line\nkey \[REDACTED:github-token:[0-9a-f]{8}\] é done\n$/);
    expect(readFileSync(output.path, "utf8")).toMatch(/^# Review\nfound \[REDACTED:aws-access-key:[0-9a-f]{8}\] in config\n$/);
    const rawFile = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith(`${raw.id}.`) && f.endsWith(".log"))!));
    expect(rawFile.toString()).toBe(GH);
    // only the byte artifact's content holds the secret (its summary is redacted); metadata agrees with the redacted sizes
    expect(allBytes(dir).split(GH).length - 1).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, `${text.id}.meta.json`), "utf8")).summary).not.toContain(GH);
    const meta = JSON.parse(readFileSync(join(dir, `${streamed.id}.meta.json`), "utf8"));
    expect(meta.sizeBytes).toBe(Buffer.byteLength(streamFile));
    const reported = warnings.filter((w) => w.code === "SECRET_REDACTED").map((w) => w.message);
    expect(reported.some((msg) => msg.startsWith(`Artifact ${streamed.id}: redacted github-token×1`))).toBe(true);
    expect(reported.some((msg) => msg.startsWith("Agent output reviewer: redacted aws-access-key×1"))).toBe(true);
    expect(JSON.stringify(warnings)).not.toContain(GH);
  });

  it("stores artifacts exactly without the option", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    m.appendMessage({ role: "user", content: "hi" });
    m.artifacts!.save(`export GITHUB_TOKEN=${GH}\n`, { toolType: "bash" });
    m.artifacts!.saveAgentOutput("reviewer", GH);
    await m.close();
    // the artifact, its summary, the agent output
    expect(allBytes(m.artifactsDir!).split(GH).length - 1).toBe(3);
  });
});
