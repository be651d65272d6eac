// The library under Bun (omp's runtime): a Bun child runs test/runtime/helpers/bun-smoke.mjs against the built dist/,
// and this side checks what it left on disk and reads it back with the Node build.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { BUN_VERSION, bunBinary } from "../support/bun.ts";
import { onLines, REPO_ROOT } from "../support/child.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const BUN = bunBinary();
const SCRIPT = join(import.meta.dirname, "helpers/bun-smoke.mjs");

interface BunChild {
  /** Resolves with the first stdout line, in order, that has not been taken yet. */
  line: () => Promise<string>;
  exit: Promise<{ code: number | null; stderr: string }>;
}

function startBun(args: string[]): BunChild {
  const child = spawn(BUN!, [SCRIPT, ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  onLines(child, (line) => {
    const take = waiting.shift();
    if (take) take(line);
    else lines.push(line);
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (d: string) => (stderr += d));
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
  const line = () => {
    const ready = lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return Promise.race([
      new Promise<string>((resolve) => waiting.push(resolve)),
      exit.then(({ code, stderr }) => Promise.reject(new Error(`bun exited (${code}) before printing a line: ${stderr}`))),
    ]);
  };
  return { line, exit };
}

describe.skipIf(BUN === null)(`the library under Bun ${BUN_VERSION} (built dist/)`, () => {
  it("creates a session, stores an image as a blob, spills an artifact, forks and reopens; Node reads it all back", async () => {
    expect(existsSync(join(REPO_ROOT, "dist", "index.js")), "dist/ is built by `npm test` (npm run build)").toBe(true);
    const root = tempDir();
    const png = makePng(48, 48, 21);
    const pngPath = join(root, "picture.png");
    writeFileSync(pngPath, png);

    const bun = startBun(["write", root, join(root, "project"), pngPath]);
    const printed = await bun.line();
    const { code, stderr } = await bun.exit;
    expect(code, stderr).toBe(0);
    const out = JSON.parse(printed);
    expect(out.runtime).toBe(`bun ${BUN_VERSION}`);

    // the image went to the blob store: the blob holds the PNG's bytes, the line holds only its ref
    const hash = sha(png);
    expect(readFileSync(join(root, "blobs", hash)).equals(png)).toBe(true);
    const text = readFileSync(out.sessionFile, "utf8");
    expect(text).not.toContain(png.toString("base64").slice(0, 64));
    const lines = text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(["session", "message", "message", "message"]);
    expect(lines.slice(1).map((l) => l.id)).toEqual(out.ids);
    expect(lines[2].message.content[1]).toEqual({ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" });

    // the spilled artifact is a file of the session's artifacts directory, hard-linked into the fork's
    expect(out.pointer).toMatch(/^artifact:\/\/\d+$/);
    const name = `${out.pointer.slice("artifact://".length)}.bash.log`;
    expect(readdirSync(out.artifactsDir)).toContain(name);
    expect(readFileSync(join(out.artifactsDir, name), "utf8")).toBe("x".repeat(100_000));
    expect(statSync(join(out.forkArtifactsDir, name)).ino).toBe(statSync(join(out.artifactsDir, name)).ino);
    expect(JSON.parse(lines[3].message.content[0].text).pointer).toBe(out.pointer);

    // the fork is a second file with the same entries; Bun reopened both with the image and artifact back
    expect(out.forkFile).not.toBe(out.sessionFile);
    expect(out.reopenedIds).toEqual(out.ids);
    expect(out.forkIds).toEqual(out.ids);
    expect([out.imageBack, out.artifactBack, out.forkArtifactBack]).toEqual([true, true, true]);

    const node = await SessionManager.open(out.sessionFile, { root, readOnly: true });
    expect(node.getEntries().map((e) => e.id)).toEqual(out.ids);
    const content = (node.getEntry(out.ids[1])!.message as { content: Array<{ data?: string }> }).content;
    expect(content[1]!.data).toBe(png.toString("base64"));
    expect(node.artifacts!.get(out.pointer)).toBe("x".repeat(100_000));
    await node.close();
  });

  it("the lock holds across runtimes: Node is refused a session Bun writes, Bun one that Node writes (SESSION_LOCKED)", async () => {
    const root = tempDir();
    const first = await SessionManager.create(join(root, "project"), { root });
    first.appendMessage({ role: "user", content: "written by node" });
    await first.close();
    const path = first.sessionFile!;

    const holder = startBun(["hold", root, path]);
    expect(await holder.line()).toBe("ready");
    const held = readFileSync(path);
    await expectCode(SessionManager.open(path, { root }), "SESSION_LOCKED");
    expect(readFileSync(path).equals(held)).toBe(true);
    writeFileSync(`${path}.go`, "");
    expect(await holder.line()).toBe("done");
    const { code, stderr } = await holder.exit;
    expect(code, stderr).toBe(0);

    const node = await SessionManager.open(path, { root });
    expect(node.getEntries().map((e) => (e.message as { content: string }).content)).toEqual([
      "written by node",
      `appended by the holder (bun ${BUN_VERSION})`,
    ]);
    const refused = startBun(["contend", root, path]);
    expect(await refused.line()).toBe("SESSION_LOCKED");
    expect((await refused.exit).code).toBe(0);
    await node.close();

    const admitted = startBun(["contend", root, path]);
    expect(await admitted.line()).toBe("ok");
    expect((await admitted.exit).code).toBe(0);
  });
});
