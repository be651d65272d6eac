import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliProcess } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { http, login } from "../viewer/viewer-http.ts";
import { viewerStore } from "../viewer/viewer-fixtures.ts";

const BIN = join(import.meta.dirname, "../../bin/transcript-store.mjs");

describe("transcript-store serve (the real binary)", () => {
  it("prints its URL, answers with the token, and stops on SIGTERM", async () => {
    const s = await viewerStore();
    const child = spawn(process.execPath, [BIN, "serve", "--root", s.root], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /viewer at (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)\n/.exec(out);
        if (m !== null) resolve(m[1]!);
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}`)));
    });
    const cookie = await login(url);
    const list = await http(`${new URL(url).origin}/`, { cookie });
    expect(list.status).toBe(200);
    expect(list.body).toContain(s.m.sessionId);
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(code ?? (signal === "SIGTERM" ? 143 : null))),
    );
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
  });

  it("refuses a bad --port with exit 2; --help names the flags", async () => {
    const root = tempDir();
    const bad = await cliProcess(["serve", "--root", root, "--port", "http"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.toString()).toContain("--port must be a port number");
    const help = await cliProcess(["serve", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.toString()).toContain("serve [--port <n>] [--host <addr>]");
  });
});
