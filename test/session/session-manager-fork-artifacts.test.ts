import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveInternalUrl } from "../../src/artifacts/internal-urls.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("fork and move carry artifacts", () => {
  it("a 20 MB artifacts directory forks through hard links; new fork artifacts continue the ids and leave the source alone", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "run tools" });
    const chunk = "0123456789abcdef".repeat(65536); // 1 MiB
    const refs = Array.from({ length: 20 }, (_, i) => m.artifacts!.save(`${i}:${chunk}`, { toolType: "bash", name: `out-${i}` }));
    expect(refs.map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    const sourceFiles = readdirSync(m.artifactsDir!).sort();

    const fork = await m.fork();
    for (const ref of refs) {
      const name = ref.path.split("/").at(-1)!;
      expect(statSync(join(fork.artifactsDir!, name)).ino).toBe(statSync(ref.path).ino);
    }
    expect(fork.artifacts!.get("out-7")).toBe(`7:${chunk}`);
    expect(resolveInternalUrl("artifact://3", { session: fork }).content).toBe(`3:${chunk}`);
    const added = fork.artifacts!.save("fork only", { toolType: "bash" });
    expect(added.id).toBe("20");
    expect(readdirSync(m.artifactsDir!).sort()).toEqual(sourceFiles);
    expect(m.artifacts!.get("20")).toBeNull();
    expect(m.artifacts!.save("source next", { toolType: "bash" }).id).toBe("20");
    expect(fork.artifacts!.get("20")).toBe("fork only");

    await fork.moveTo(join(root, "moved"));
    expect(fork.artifacts!.get("out-19")).toBe(`19:${chunk}`);
    expect(resolveInternalUrl("artifact://20", { session: fork }).content).toBe("fork only");
    await fork.close();
    await m.close();
    const reopened = await SessionManager.open(fork.sessionFile!, { root });
    expect(reopened.artifacts!.list()).toHaveLength(21);
    await reopened.close();
  });
});
