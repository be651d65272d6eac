import { createRequire } from "node:module";
import { InterruptedError, type CliIo } from "./context.ts";
import { terminalSafe } from "./terminal-text.ts";

/** `cli-progress`, loaded when a bar is first drawn (not at start-up: issue 34). */
let cliProgressModule: typeof import("cli-progress") | null = null;
function cliProgress(): typeof import("cli-progress") {
  cliProgressModule ??= createRequire(import.meta.url)("cli-progress") as typeof import("cli-progress");
  return cliProgressModule;
}

/** Progress over a known number of files: a bar on a TTY's stderr, else one line per file. */
export interface Progress {
  /**
   * One file done. Yields to the event loop (so a signal is seen even by a loop of synchronous
   * work) and throws `InterruptedError` once `io.signal` is aborted: commands stop between files.
   */
  tick(label: string): Promise<void>;
  stop(): void;
}

/**
 * Progress running now (bars and lines): `stopProgressBars` restores the terminal (cursor, line
 * wrap) whatever way the run ends, and while one runs a signal waits for the next `tick`.
 */
const running = new Set<{ stop(): void }>();

/** Bars drawn during one synchronous step (an index build): restored on exit, no loop to stop between files. */
const drawing = new Set<() => void>();

/** Stops all progress still running: a bar's cursor is shown and line wrap turned back on. Idempotent. */
export function stopProgressBars(): void {
  for (const progress of [...running]) progress.stop();
  for (const stop of [...drawing]) stop();
}

/** A bar on the terminal's stderr, moved by its caller: `update` a count and a label (escaped here), then `stop`. */
export interface DrawnBar {
  update(done: number, label: string): void;
  /** Idempotent; `stopProgressBars` calls it too, however the run ends. */
  stop(): void;
}

/**
 * A bar for synchronous work (an index build calls back between files without yielding): drawn
 * as `startProgress`'s, the terminal restored however the run ends, but a signal is not held for a
 * `tick` (the work has no place to stop in between; the run ends once it returns).
 */
export function startDrawnBar(verb: string, total: number): DrawnBar {
  const bar = new (cliProgress().SingleBar)(
    { stream: process.stderr, format: `${verb} [{bar}] {value}/{total} {label}`, hideCursor: true, clearOnComplete: true },
    cliProgress().Presets.shades_classic,
  );
  bar.start(total, 0, { label: "" });
  const stop = () => {
    if (drawing.delete(stop)) bar.stop();
  };
  drawing.add(stop);
  return { update: (done, label) => bar.update(done, { label: terminalSafe(label) }), stop };
}

/**
 * A loop over files is running: a signal now is best taken between two files (`tick`). Elsewhere
 * (no such loop) the run can only end at once.
 */
export function stoppingBetweenFiles(): boolean {
  return running.size > 0;
}

/** Registers a progress as running until its `stop`. */
function track(tick: (label: string) => Promise<void>, stop: () => void): Progress {
  const handle = {
    stop: () => {
      if (running.delete(handle)) stop();
    },
  };
  running.add(handle);
  return { tick, stop: handle.stop };
}

/** Between two files: lets a pending signal handler run, then stops the command if it was interrupted. */
async function checkpoint(io: CliIo): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (io.signal?.aborted) throw new InterruptedError(io.signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT");
}

export function startProgress(io: CliIo, total: number, verb: string, quiet: boolean): Progress {
  if (quiet || total === 0)
    return track(
      () => checkpoint(io),
      () => {},
    );
  // A bar needs a terminal that moves the cursor: TERM=dumb (an editor's shell buffer) gets lines.
  // No colour either way: the bar is drawn in plain characters, so NO_COLOR/FORCE_COLOR change nothing.
  if (!io.isTTY || io.env.TERM === "dumb") {
    let done = 0;
    return track(
      (label) => {
        io.stderr(`${verb} ${++done}/${total} ${terminalSafe(label)}\n`);
        return checkpoint(io);
      },
      () => {},
    );
  }
  // The bar draws with its own control sequences, so it writes to the process's stderr itself; the
  // label (a file name) is the only text it shows that is not ours. It hides the cursor and turns
  // line wrap off until `stop`, which every way out of a run reaches (`stopProgressBars`).
  const bar = new (cliProgress().SingleBar)(
    { stream: process.stderr, format: `${verb} [{bar}] {value}/{total} {label}`, hideCursor: true, clearOnComplete: true },
    cliProgress().Presets.shades_classic,
  );
  bar.start(total, 0, { label: "" });
  return track(
    (label) => {
      bar.increment(1, { label: terminalSafe(label) });
      return checkpoint(io);
    },
    () => bar.stop(),
  );
}
