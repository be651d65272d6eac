import { io } from "../../../src/io.ts";

/**
 * Wraps every I/O call that changes the disk so the Nth one (counting from 0) SIGKILLs this
 * process instead: every kill point of an operation can be reached deterministically.
 */
export function killAtNthEffect(n: number): void {
  const effects = [
    "openSync",
    "writeSync",
    "renameSync",
    "unlinkSync",
    "rmSync",
    "rmdirSync",
    "mkdirSync",
    "copyFileSync",
    "linkSync",
    "ftruncateSync",
  ];
  let count = 0;
  for (const name of effects) {
    const seam = io as unknown as Record<string, (...args: unknown[]) => unknown>;
    const original = seam[name];
    if (original === undefined) continue;
    seam[name] = (...args: unknown[]) => {
      // opens count only when they may write: string flags other than "r", numeric ones with a write mode
      const flags = args[1];
      const writes = name !== "openSync" || (typeof flags === "string" ? flags !== "r" : typeof flags === "number" && (flags & 3) !== 0);
      if (writes && count++ === n) process.kill(process.pid, "SIGKILL");
      return original(...args);
    };
  }
}
