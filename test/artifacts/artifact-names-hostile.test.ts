import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { sanitizeAgentName, sanitizeToolType } from "../../src/artifacts/artifact-names.ts";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { resolveInternalUrl } from "../../src/artifacts/internal-urls.ts";
import { tempDir } from "../support/temp-dir.ts";
import { codeOf } from "../support/error-code.ts";

const HOSTILE = ["../../etc/passwd", "a/b", "..", ".", "%2e%2e%2f", "a\\b", "x\0y", "", " ", "C:evil", "a".repeat(300), "../".repeat(100)];

/** Every file below `root`, relative, with directories marked. */
function tree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        out.push(`${r}/`);
        walk(join(dir, entry.name), r);
      } else out.push(r);
    }
  };
  walk(root, "");
  return out.sort();
}

describe("hostile ids, names and tool types stay inside the directory (acceptance 2)", () => {
  it("tool types outside [A-Za-z0-9_-]{1,64} become `tool`", () => {
    for (const t of HOSTILE) expect(sanitizeToolType(t), JSON.stringify(t)).toBe("tool");
    expect(sanitizeToolType("a".repeat(64))).toBe("a".repeat(64));
    expect(sanitizeToolType("web_fetch-2")).toBe("web_fetch-2");
  });

  it("saving and allocating with every hostile tool type and agent name writes only flat files in the directory", () => {
    const root = tempDir("ts-art-");
    const store = new ArtifactStore(join(root, "session"));
    for (const t of HOSTILE) {
      const ref = store.save(`content for ${JSON.stringify(t)}`, { toolType: t, name: `n:${t}` });
      expect(dirname(ref.path)).toBe(store.dir);
      expect(ref.toolType).toBe("tool");
      const slot = store.allocate(t);
      expect(dirname(slot.path)).toBe(store.dir);
      const agentId = store.allocateAgentOutputId(t);
      const saved = store.saveAgentOutput(agentId, `# ${t}`);
      expect(dirname(saved.path)).toBe(store.dir);
      expect(agentId.length).toBeLessThanOrEqual(64 + 4);
      expect(agentId).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    // only the session directory exists under root, and it has no subdirectories
    expect(readdirSync(root)).toEqual(["session"]);
    expect(tree(store.dir).every((p) => !p.includes("/"))).toBe(true);
    for (const t of HOSTILE) expect(store.get(`n:${t}`)).toBe(`content for ${JSON.stringify(t)}`);
  });

  it("agent names keep what is safe, cut at 64, and fall back to `agent`", () => {
    expect(sanitizeAgentName("../../etc/passwd")).toBe("______etc_passwd");
    expect(sanitizeAgentName("a/b")).toBe("a_b");
    expect(sanitizeAgentName("..")).toBe("agent");
    expect(sanitizeAgentName("%2e%2e%2f")).toBe("_2e_2e_2f");
    expect(sanitizeAgentName("x".repeat(300))).toBe("x".repeat(64));
    expect(sanitizeAgentName("Code Reviewer")).toBe("Code_Reviewer");
  });

  it("rejects hostile parent prefixes and agent output ids with INVALID_ARTIFACT_ID", () => {
    const store = new ArtifactStore(join(tempDir("ts-art-"), "s"));
    for (const prefix of ["..", "../x", "a/b", "a..b", ".a", "a.", "%2e%2e", "x".repeat(250)]) {
      expect(
        codeOf(() => store.allocateAgentOutputId("child", { parentPrefix: prefix })),
        prefix,
      ).toBe("INVALID_ARTIFACT_ID");
    }
    for (const id of ["..", "../x", "a/b", "", "a..b", "x\0"]) {
      expect(
        codeOf(() => store.saveAgentOutput(id, "x")),
        id,
      ).toBe("INVALID_ARTIFACT_ID");
      expect(
        codeOf(() => store.getAgentOutput(id)),
        id,
      ).toBe("INVALID_ARTIFACT_ID");
    }
  });

  it("rejects hostile internal URLs with codes before touching the disk", () => {
    const root = tempDir("ts-art-");
    const store = new ArtifactStore(join(root, "s"));
    store.save("zero", { toolType: "bash" });
    const session = { artifacts: store };
    const cases: Array<[string, string]> = [
      ["artifact://../x", "INVALID_ARTIFACT_ID"],
      ["artifact://1e3", "INVALID_ARTIFACT_ID"],
      ["artifact://-1", "INVALID_ARTIFACT_ID"],
      ["artifact://0x1", "INVALID_ARTIFACT_ID"],
      ["artifact://", "INVALID_ARTIFACT_ID"],
      ["artifact://0/../../x", "INVALID_ARTIFACT_ID"],
      ["artifact://%30", "INVALID_ARTIFACT_ID"],
      ["agent://..%2F..%2Fx", "INVALID_ARTIFACT_ID"],
      ["agent://../x", "INVALID_ARTIFACT_ID"],
      ["agent://..", "INVALID_ARTIFACT_ID"],
      ["agent://%2e%2e/x", "INVALID_ARTIFACT_ID"],
      ["agent://a%2Fb", "INVALID_ARTIFACT_ID"],
      ["agent://%E0%A4%A", "INVALID_ARTIFACT_ID"],
      ["agent://", "INVALID_ARTIFACT_ID"],
      ["file:///etc/passwd", "INVALID_ARTIFACT_ID"],
    ];
    for (const [url, code] of cases)
      expect(
        codeOf(() => resolveInternalUrl(url, { session })),
        url,
      ).toBe(code);
    expect(codeOf(() => store.get("artifact://../x"))).toBe("INVALID_ARTIFACT_ID");
    expect(codeOf(() => store.get("artifact://1e3"))).toBe("INVALID_ARTIFACT_ID");
    // a hostile string used as a plain name is just an unknown name
    expect(store.get("../../etc/passwd")).toBeNull();
    expect(statSync(store.dir).isDirectory()).toBe(true);
  });
});
