import cliProgress from "cli-progress";
import { InterruptedError, type CliIo } from "./context.ts";
import { terminalSafe } from "./terminal-text.ts";

/** Progress over a known number of files: a bar on a TTY's stderr, else one line per file. */
export interface Progress {
  /**
   * One file done. Yields to the event loop (so a signal is seen even by a loop of synchronous
   * work) and throws `InterruptedError` once `io.signal` is aborted: commands stop between files.
   */
  tick(label: string): Promise<void>;
  stop(): void;
}

/** Bars drawing now: `stopProgressBars` restores the terminal (cursor, line wrap) whatever way the run ends. */
const drawing = new Set<{ stop(): void }>();

/** Stops every bar still drawing: the cursor is shown and line wrap turned back on. Idempotent. */
export function stopProgressBars(): void {
  for (const bar of [...drawing]) bar.stop();
}

/** Between two files: lets a pending signal handler run, then stops the command if it was interrupted. */
async function checkpoint(io: CliIo): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (io.signal?.aborted) throw new InterruptedError(io.signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT");
}

export function startProgress(io: CliIo, total: number, verb: string, quiet: boolean): Progress {
  if (quiet || total === 0) return { tick: () => checkpoint(io), stop: () => {} };
  if (!io.isTTY) {
    let done = 0;
    return {
      tick: (label) => {
        io.stderr(`${verb} ${++done}/${total} ${terminalSafe(label)}\n`);
        return checkpoint(io);
      },
      stop: () => {},
    };
  }
  // The bar draws with its own control sequences, so it writes to the process's stderr itself; the
  // label (a file name) is the only text it shows that is not ours. It hides the cursor and turns
  // line wrap off until `stop`, which every way out of a run reaches (`stopProgressBars`).
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: `${verb} [{bar}] {value}/{total} {label}`, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { label: "" });
  const handle = {
    stop: () => {
      if (drawing.delete(handle)) bar.stop();
    },
  };
  drawing.add(handle);
  return {
    tick: (label) => {
      bar.increment(1, { label: terminalSafe(label) });
      return checkpoint(io);
    },
    stop: handle.stop,
  };
}
