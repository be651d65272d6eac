import { mkdirSync, readdirSync, readFileSync, symlinkSync, lstatSync, writeFileSync, existsSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isTempFileName } from "../../src/io.ts";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { OutputSink } from "../../src/artifacts/output-sink.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { io } from "../../src/io.ts";
import { codeOf } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A directory outside the store holding files an attacker wants overwritten or removed. */
function victimDir(root: string): { dir: string; snapshot: () => Record<string, string> } {
  const dir = join(root, "victim");
  mkdirSync(dir);
  writeFileSync(join(dir, "0.bash.log"), "precious log");
  const meta = { v: 1, id: "0", toolType: "bash", createdAt: 1, contentType: "text/plain", encoding: "text" };
  writeFileSync(join(dir, "0.meta.json"), `${JSON.stringify(meta)}\n`);
  writeFileSync(join(dir, "notes.md"), "precious notes");
  const snapshot = () =>
    Object.fromEntries(
      readdirSync(dir)
        .sort()
        .map((n) => [n, readFileSync(join(dir, n), "utf8")]),
    );
  return { dir, snapshot };
}

const realOpen = io.openSync;
afterEach(() => {
  io.openSync = realOpen;
});

describe("symlinks planted as or in the artifacts directory are never written through (Trust item 5)", () => {
  it("a symlink planted as the directory: every write is PERSISTENCE_FAILED and nothing lands in its target", () => {
    const root = tempDir("ts-art-link-");
    const victim = victimDir(root);
    const before = victim.snapshot();
    const dir = join(root, "session");
    symlinkSync(victim.dir, dir);
    const warnings: StoreWarning[] = [];
    const store = new ArtifactStore(dir, { onWarning: (w) => warnings.push(w), now: () => 10 });
    expect(codeOf(() => store.save("evil", { toolType: "bash" }))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.spill("x".repeat(100), { toolType: "bash", maxInlineBytes: 10 }))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.createWriter("bash"))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.allocate("bash"))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.allocateAgentOutputId("notes"))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.saveAgentOutput("notes", "evil"))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.clear())).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.cleanupExpired())).toBe("PERSISTENCE_FAILED");
    const sink = new OutputSink({ artifacts: store, toolType: "bash", spillThreshold: 16 });
    sink.push("y".repeat(100));
    expect(sink.dump().artifactId).toBeUndefined();
    expect(warnings.map((w) => w.code)).toContain("PERSISTENCE_FAILED");
    expect(victim.snapshot()).toEqual(before);
    expect(lstatSync(dir).isSymbolicLink()).toBe(true);
  });

  it("a dangling symlink planted as the directory is not created through either", () => {
    const root = tempDir("ts-art-link-");
    const target = join(root, "would-be-created");
    const dir = join(root, "session");
    symlinkSync(target, dir);
    const store = new ArtifactStore(dir);
    expect(codeOf(() => store.save("evil", { toolType: "bash" }))).toBe("PERSISTENCE_FAILED");
    expect(codeOf(() => store.allocateAgentOutputId("a"))).toBe("PERSISTENCE_FAILED");
    expect(existsSync(target)).toBe(false);
  });

  it("a symlink planted at the content name a writer is about to publish: OUTPUT_EXISTS, link and target untouched", () => {
    const root = tempDir("ts-art-link-");
    const secret = join(root, "secret.txt");
    writeFileSync(secret, "top secret");
    const store = new ArtifactStore(join(root, "session"));
    const writer = store.createWriter("bash");
    writer.write("streamed");
    const planted = join(store.dir, `${writer.id}.bash.log`);
    symlinkSync(secret, planted);
    expect(codeOf(() => writer.finish())).toBe("OUTPUT_EXISTS");
    expect(readFileSync(secret, "utf8")).toBe("top secret");
    expect(lstatSync(planted).isSymbolicLink()).toBe(true);
    expect(store.get(writer.id)).toBeNull();
    // the id stays taken; the next save gets a fresh one and a regular file
    const next = store.save("after", { toolType: "bash" });
    expect(Number(next.id)).toBeGreaterThan(Number(writer.id));
    expect(lstatSync(next.path).isFile()).toBe(true);
  });

  it("another tool's regular file at the content name a writer is about to publish: OUTPUT_EXISTS, the file untouched", () => {
    const root = tempDir("ts-art-taken-");
    const store = new ArtifactStore(join(root, "session"));
    const writer = store.createWriter("bash");
    writer.write("streamed");
    const taken = join(store.dir, `${writer.id}.bash.log`);
    writeFileSync(taken, "another tool's output");
    const err = (() => {
      try {
        writer.finish();
      } catch (e) {
        return e as { code?: string; path?: string };
      }
      return null;
    })();
    expect(err).toMatchObject({ code: "OUTPUT_EXISTS", path: taken });
    expect(readFileSync(taken, "utf8")).toBe("another tool's output");
    expect(readdirSync(store.dir).filter(isTempFileName)).toEqual([]);
  });

  it("symlinks planted at the next content and metadata names are stepped over, never written through", () => {
    const root = tempDir("ts-art-link-");
    const secret = join(root, "secret.txt");
    writeFileSync(secret, "top secret");
    const store = new ArtifactStore(join(root, "session"));
    expect(store.save("first", { toolType: "bash" }).id).toBe("0");
    // planted after the store last listed the directory
    symlinkSync(secret, join(store.dir, "1.bash.log"));
    symlinkSync(secret, join(store.dir, "2.meta.json"));
    const ref = store.save("second", { toolType: "bash" });
    expect(ref.id).toBe("3");
    expect(readFileSync(ref.path, "utf8")).toBe("second");
    expect(readFileSync(secret, "utf8")).toBe("top secret");
    expect(lstatSync(join(store.dir, "1.bash.log")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(store.dir, "2.meta.json")).isSymbolicLink()).toBe(true);
    expect(store.list().map((r) => r.id)).toEqual(["0", "3"]);
  });

  it("another tool's file written at the next content name after the last listing is kept and stays readable", () => {
    const store = new ArtifactStore(join(tempDir("ts-art-link-"), "session"));
    expect(store.save("first", { toolType: "bash" }).id).toBe("0");
    writeFileSync(join(store.dir, "1.bash.log"), "written by another tool");
    const ref = store.save("second", { toolType: "bash" });
    expect(ref.id).toBe("2");
    expect(store.get("1")).toBe("written by another tool");
    expect(store.list().map((r) => [r.id, store.get(r.id)])).toEqual([
      ["0", "first"],
      ["1", "written by another tool"],
      ["2", "second"],
    ]);
  });

  it("a symlink planted at a temp name just before it is created: coded error, nothing written to the target", () => {
    const root = tempDir("ts-art-link-");
    const secret = join(root, "secret.txt");
    writeFileSync(secret, "top secret");
    const store = new ArtifactStore(join(root, "session"));
    store.saveAgentOutput(store.allocateAgentOutputId("a"), "ok");
    const attempts: [string, () => unknown][] = [
      ["save", () => store.save("evil", { toolType: "bash" })],
      ["writer", () => store.createWriter("bash")],
      ["agent output", () => store.saveAgentOutput("a", "evil")],
    ];
    let plantedCount = 0;
    for (const [what, attempt] of attempts) {
      // Every temp file the engine creates: plant the link in the gap between naming and opening it.
      for (let nth = 0; nth < 3; nth++) {
        let tempOpens = 0;
        let planted: string | null = null;
        io.openSync = ((path: string, flags: unknown, mode?: number) => {
          if (typeof path === "string" && basename(path).startsWith(".") && path.endsWith(".tmp") && tempOpens++ === nth) {
            symlinkSync(secret, path);
            planted = path;
          }
          return realOpen(path, flags as never, mode);
        }) as typeof io.openSync;
        let code: string | undefined;
        try {
          code = codeOf(attempt);
        } finally {
          io.openSync = realOpen;
        }
        if (planted === null) continue;
        plantedCount++;
        expect(code, `${what}, temp file ${nth}`).toBe("PERSISTENCE_FAILED");
        expect(readFileSync(secret, "utf8")).toBe("top secret");
        expect(lstatSync(planted).isSymbolicLink()).toBe(true);
      }
    }
    // save: metadata and content temp files; writer: its stream; agent output: its temp file
    expect(plantedCount).toBe(4);
  });
});
