import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** The Chromium binary: $CHROMIUM_PATH, else the first of Debian's and others' names on PATH; null when none. */
export function findChromium(): string | null {
  const named = process.env.CHROMIUM_PATH;
  if (named !== undefined && named !== "") return named;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {}
    }
  }
  return null;
}

/** One CDP event, as the browser sent it. */
export interface CdpEvent {
  method: string;
  params: Record<string, any>;
  sessionId?: string;
}

/**
 * A headless Chromium driven over the DevTools protocol with Node's own WebSocket: launched with
 * `--remote-debugging-port=0`, its WebSocket URL read from stderr. Commands go to a page target
 * attached in flat mode; every event is kept in `events`.
 */
export class HeadlessChromium {
  readonly events: CdpEvent[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private readonly waiters: Array<{ method: string; resolve: (e: CdpEvent) => void }> = [];
  private sessionId = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly ws: WebSocket,
    private readonly profile: string,
  ) {
    ws.addEventListener("message", (m) => this.onMessage(JSON.parse(String(m.data))));
  }

  static async launch(binary: string): Promise<HeadlessChromium> {
    const profile = mkdtempSync(join(tmpdir(), "ts-chromium-"));
    const args = [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      "about:blank",
    ];
    // Its own process group: close() ends the browser's helper processes with it, and only them.
    const child = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    const url = await new Promise<string>((resolve, reject) => {
      let err = "";
      child.stderr!.on("data", (d: Buffer) => {
        err += d.toString("utf8");
        const found = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (found) resolve(found[1]!);
      });
      child.on("error", reject);
      child.on("exit", (code) => reject(new Error(`chromium exited (${code}) before listening:\n${err}`)));
    });
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve());
      ws.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)));
    });
    const browser = new HeadlessChromium(child, ws, profile);
    const { targetId } = await browser.send("Target.createTarget", { url: "about:blank" }, false);
    const { sessionId } = await browser.send("Target.attachToTarget", { targetId, flatten: true }, false);
    browser.sessionId = sessionId;
    return browser;
  }

  private onMessage(message: any): void {
    if (typeof message.id === "number") {
      const p = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) p?.reject(new Error(`${message.error.message} (${message.error.code})`));
      else p?.resolve(message.result);
      return;
    }
    const event: CdpEvent = { method: message.method, params: message.params ?? {}, sessionId: message.sessionId };
    this.events.push(event);
    for (const [i, w] of [...this.waiters.entries()].reverse()) {
      if (w.method === event.method) {
        this.waiters.splice(i, 1);
        w.resolve(event);
      }
    }
  }

  /** Sends a command to the page (or, with `page` false, to the browser) and awaits its result. */
  send(method: string, params: Record<string, unknown> = {}, page = true): Promise<any> {
    const id = this.nextId++;
    const message: Record<string, unknown> = { id, method, params };
    if (page) message.sessionId = this.sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify(message));
    });
  }

  /** The next event of this method (registered before the command that causes it). */
  next(method: string): Promise<CdpEvent> {
    return new Promise((resolve) => this.waiters.push({ method, resolve }));
  }

  /** Evaluates an expression in the page; its value (JSON) or the exception it threw. */
  async evaluate(expression: string): Promise<any> {
    const r = await this.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(`page threw: ${JSON.stringify(r.exceptionDetails).slice(0, 500)}`);
    return r.result.value;
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else this.child.once("exit", () => resolve());
    });
    try {
      await Promise.race([this.send("Browser.close", {}, false), new Promise((r) => setTimeout(r, 2000))]);
    } catch {}
    this.ws.close();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    // Whatever of the browser's group still runs (a helper writing to the profile) is ended.
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {}
    await exited;
    rmSync(this.profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
  }
}
