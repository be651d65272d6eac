import { spawn } from "node:child_process";
import { storeOptions, UsageError, type Command } from "../context.ts";
import { terminalText } from "../terminal-text.ts";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Opens a URL in the desktop's browser (best effort: a machine without one just prints it). */
function openInBrowser(url: string): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {}
}

export const serveCommand: Command = {
  name: "serve",
  summary: "a local web viewer over the store: sessions, search, usage and space, compare; --write enables actions",
  usage: "serve [--port <n>] [--host <addr>] [--open] [--write] [--redact]",
  options: {
    port: { type: "string" },
    host: { type: "string" },
    open: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    redact: { type: "boolean", default: false },
  },
  maxArgs: 0,
  readOnly: (values) => values.write !== true,
  async run(ctx) {
    const port = ctx.values.port === undefined ? 0 : Number(ctx.values.port);
    if (!Number.isSafeInteger(port) || port < 0 || port > 65535)
      throw new UsageError(terminalText`serve: --port must be a port number (0-65535), got ${String(ctx.values.port)}`);
    const host = (ctx.values.host as string | undefined) ?? "127.0.0.1";
    if (!LOOPBACK.has(host))
      ctx.io.stderr(
        terminalText`warning: serving on ${host}: anyone who can reach this address and learns the URL's token can read every session\n`,
      );
    const { startViewer } = await import("../../viewer/server.ts");
    const { main } = await import("../main.ts");
    const flags = [
      ...(ctx.store !== undefined ? ["--store", ctx.store] : []),
      ...(ctx.root !== undefined ? ["--root", ctx.root] : []),
      "--sessions-dir",
      ctx.dirs.sessionsDir,
      "--blobs-dir",
      ctx.dirs.blobsDir,
    ];
    const viewer = await startViewer({
      ...storeOptions(ctx),
      host,
      port,
      write: ctx.values.write === true,
      sharingView: ctx.values.redact === true,
      hooks: {
        // The viewer's redact is the CLI's own command, with the store's flags.
        redact: async (id) => {
          let out = "";
          const code = await main(["redact", id, ...flags], {
            ...ctx.io,
            stdout: (t) => {
              out += t;
            },
            stderr: (t) => {
              out += t;
            },
          });
          if (code !== 0) throw new Error(`redact exited ${code}: ${out.trim()}`);
          return out.trim();
        },
      },
    });
    ctx.io.stdout(`transcript-store viewer at ${viewer.url}\n(Ctrl-C stops it)\n`);
    if (ctx.values.open === true) openInBrowser(viewer.url);
    await new Promise<void>((resolve) => {
      if (ctx.io.signal === undefined) return;
      if (ctx.io.signal.aborted) resolve();
      ctx.io.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await viewer.close();
    return 0;
  },
};
