import { spawn } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendHandles, openHandleCount } from "../../src/session/append-handles.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const defaultLimit = appendHandles.limit;
afterEach(() => {
  appendHandles.limit = defaultLimit;
});

function lines(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter(Boolean);
}

describe("bounded append handles", () => {
  it("an evicted handle reopens and appends after the lines it knew", async () => {
    appendHandles.limit = 1;
    const root = tempDir();
    const a = await SessionManager.create(join(root, "a"), { root });
    const b = await SessionManager.create(join(root, "b"), { root });
    a.appendMessage({ role: "user", content: "a1" });
    b.appendMessage({ role: "user", content: "b1" }); // evicts a's descriptor
    expect(openHandleCount()).toBe(1);
    a.appendMessage({ role: "user", content: "a2" }); // reopens a, evicts b
    b.appendMessage({ role: "user", content: "b2" });
    await a.flush();
    expect(lines(a.sessionFile!).map((l) => JSON.parse(l).message?.content)).toEqual([undefined, "a1", "a2"]);
    expect(lines(b.sessionFile!).map((l) => JSON.parse(l).message?.content)).toEqual([undefined, "b1", "b2"]);
    await a.close();
    await b.close();
    expect(openHandleCount()).toBe(0);
  });

  it("refuses to append to a file replaced (or grown) behind an evicted handle", async () => {
    appendHandles.limit = 1;
    const root = tempDir();
    const a = await SessionManager.create(join(root, "a"), { root });
    const b = await SessionManager.create(join(root, "b"), { root });
    a.appendMessage({ role: "user", content: "a1" });
    b.appendMessage({ role: "user", content: "b1" }); // evicts a's descriptor
    const path = a.sessionFile!;
    const replaced = `${readFileSync(path, "utf8")}`;
    writeFileSync(`${path}.other`, replaced);
    renameSync(`${path}.other`, path); // same bytes, another file
    expect(() => a.appendMessage({ role: "user", content: "a2" })).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readFileSync(path, "utf8")).toBe(replaced);

    b.appendMessage({ role: "user", content: "b2" });
    const c = await SessionManager.create(join(root, "c"), { root });
    c.appendMessage({ role: "user", content: "c1" }); // evicts b
    writeFileSync(b.sessionFile!, "x\n", { flag: "a" }); // grown in place behind the evicted handle
    const grown = readFileSync(b.sessionFile!, "utf8");
    expect(() => b.appendMessage({ role: "user", content: "b3" })).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    expect(readFileSync(b.sessionFile!, "utf8")).toBe(grown);
    for (const m of [a, b, c]) await m.close();
  });

  it("holds 1,000 writable sessions in a process limited to 512 descriptors", async () => {
    const root = tempDir();
    const script = join(REPO_ROOT, "test/session/helpers/many-sessions-child.ts");
    const command = `ulimit -n 512 && exec "${process.execPath}" --import tsx "${script}" "${root}" 1000 3`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn("bash", ["-c", command], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (d) => (text += d));
      child.on("error", reject);
      child.on("close", () => resolve(text));
    });
    // Every session file holds its header and the three appended lines.
    expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual({ ok: true, lines: [4] });
  }, 120_000);
});
