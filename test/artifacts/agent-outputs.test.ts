import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("agent outputs", () => {
  it("allocates name, name-2, name-3… and resumes after the .md files on disk", () => {
    const dir = join(tempDir("ts-art-"), "s");
    const store = new ArtifactStore(dir);
    expect(store.allocateAgentOutputId("reviewer")).toBe("reviewer");
    expect(store.allocateAgentOutputId("reviewer")).toBe("reviewer-2");
    expect(store.allocateAgentOutputId("planner")).toBe("planner");
    const reopened = new ArtifactStore(dir);
    expect(reopened.allocateAgentOutputId("reviewer")).toBe("reviewer-3");
    expect(reopened.allocateAgentOutputId("reviewer", { parentPrefix: "planner" })).toBe("planner.reviewer");
    expect(reopened.allocateAgentOutputId("reviewer", { parentPrefix: "planner" })).toBe("planner.reviewer-2");
    expect(reopened.listAgentOutputs()).toEqual([
      "planner",
      "planner.reviewer",
      "planner.reviewer-2",
      "reviewer",
      "reviewer-2",
      "reviewer-3",
    ]);
  });

  it("saveAgentOutput writes <id>.md (0600) by rename and reads back; artifacts and outputs do not collide", () => {
    const store = new ArtifactStore(join(tempDir("ts-art-"), "s"));
    const id = store.allocateAgentOutputId("0");
    expect(id).toBe("0");
    const ref = store.saveAgentOutput(id, "# Findings\n\nAll good ✓\n");
    expect(ref).toEqual({ id: "0", uri: "agent://0", path: join(store.dir, "0.md"), sizeBytes: 25 });
    expect(readFileSync(ref.path, "utf8")).toBe("# Findings\n\nAll good ✓\n");
    expect(statSync(ref.path).mode & 0o777).toBe(0o600);
    // agent outputs are their own namespace: artifact 0 and agent output "0" are different files
    const artifact = store.save("artifact", { toolType: "bash" });
    expect(artifact.id).toBe("0");
    expect(store.get("0")).toBe("artifact");
    expect(store.getAgentOutput("0")).toBe("# Findings\n\nAll good ✓\n");
    expect(store.getAgentOutput("missing")).toBeNull();
    expect(() => store.saveAgentOutput("x", 5 as unknown as string)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("replacing an output never half-writes it: a failed save keeps the previous content", () => {
    const store = new ArtifactStore(join(tempDir("ts-art-"), "s"));
    store.saveAgentOutput("a", "v1");
    const restore = injectFault("writeSync", () => "ENOSPC");
    try {
      expect(() => store.saveAgentOutput("a", "v2 that does not fit")).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    } finally {
      restore();
    }
    expect(store.getAgentOutput("a")).toBe("v1");
    expect(readdirSync(store.dir)).toEqual(["a.md"]);
  });
});
