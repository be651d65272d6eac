import cliProgress from "cli-progress";
import type { CliIo } from "./context.ts";
import { terminalSafe } from "./terminal-text.ts";

/** Progress over a known number of files: a bar on a TTY's stderr, else one line per file. */
export interface Progress {
  tick(label: string): void;
  stop(): void;
}

export function startProgress(io: CliIo, total: number, verb: string, quiet: boolean): Progress {
  if (quiet || total === 0) return { tick: () => {}, stop: () => {} };
  if (!io.isTTY) {
    let done = 0;
    return {
      tick: (label) => io.stderr(`${verb} ${++done}/${total} ${terminalSafe(label)}\n`),
      stop: () => {},
    };
  }
  // The bar draws with its own control sequences, so it writes to the process's stderr itself; the
  // label (a file name) is the only text it shows that is not ours.
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: `${verb} [{bar}] {value}/{total} {label}`, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { label: "" });
  let stopped = false;
  return {
    tick: (label) => bar.increment(1, { label: terminalSafe(label) }),
    stop: () => {
      if (!stopped) bar.stop();
      stopped = true;
    },
  };
}
