import { constants, existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { io, type Io } from "../../src/io.ts";

/** One change to a directory's entries, or an fsync of a directory, in the order they happened. */
export type DirEvent =
  | { op: "create" | "mkdir" | "link"; path: string }
  | { op: "rename"; from: string; to: string }
  | { op: "fsync"; dir: string };

function creates(flags: unknown): boolean {
  if (typeof flags === "number") return (flags & constants.O_CREAT) !== 0;
  return /[wa]/.test(String(flags ?? "r"));
}

/**
 * Records, through the I/O seam, every name created or renamed and every directory fsynced.
 * `unsynced()` lists the changes since the last call whose directory was not fsynced after them:
 * a name that exists at the end (a temp file renamed away or removed is not one) and whose parent
 * (both parents, for a rename) saw no fsync after the change.
 */
export function recordDirSyncs(): { events: DirEvent[]; unsynced(): string[]; restore(): void } {
  const events: DirEvent[] = [];
  const fdPaths = new Map<number, string>();
  const saved: Partial<Record<keyof Io, unknown>> = {};
  const wrap = <K extends keyof Io>(name: K, around: (original: Io[K], ...args: unknown[]) => unknown) => {
    const original = io[name];
    saved[name] = original;
    (io as Record<string, unknown>)[name] = (...args: unknown[]) => around(original, ...args);
  };
  wrap("openSync", (original, ...args) => {
    const path = resolve(String(args[0]));
    const existed = existsSync(path);
    const fd = (original as (...a: unknown[]) => number)(...args);
    fdPaths.set(fd, path);
    if (!existed && creates(args[1])) events.push({ op: "create", path });
    return fd;
  });
  wrap("closeSync", (original, fd) => {
    fdPaths.delete(fd as number);
    return (original as (fd: number) => void)(fd as number);
  });
  wrap("fsyncSync", (original, fd) => {
    const path = fdPaths.get(fd as number);
    const out = (original as (fd: number) => void)(fd as number);
    if (path !== undefined && statSync(path, { throwIfNoEntry: false })?.isDirectory()) events.push({ op: "fsync", dir: path });
    return out;
  });
  wrap("mkdirSync", (original, ...args) => {
    const target = resolve(String(args[0]));
    const first = (original as (...a: unknown[]) => string | undefined)(...args);
    const recursive = typeof args[1] === "object" && (args[1] as { recursive?: boolean } | null)?.recursive === true;
    if (!recursive) events.push({ op: "mkdir", path: target });
    else if (first !== undefined) {
      const made: string[] = [];
      for (let d = target; ; d = dirname(d)) {
        made.unshift(d);
        if (d === resolve(first) || dirname(d) === d) break;
      }
      for (const d of made) events.push({ op: "mkdir", path: d });
    }
    return first;
  });
  wrap("renameSync", (original, from, to) => {
    (original as (a: unknown, b: unknown) => void)(from, to);
    events.push({ op: "rename", from: resolve(String(from)), to: resolve(String(to)) });
  });
  wrap("linkSync", (original, from, to) => {
    (original as (a: unknown, b: unknown) => void)(from, to);
    events.push({ op: "link", path: resolve(String(to)) });
  });
  wrap("copyFileSync", (original, from, to, mode) => {
    const existed = existsSync(String(to));
    (original as (a: unknown, b: unknown, c: unknown) => void)(from, to, mode);
    if (!existed) events.push({ op: "create", path: resolve(String(to)) });
  });
  let checked = 0;
  return {
    events,
    unsynced() {
      const problems: string[] = [];
      const syncedAfter = (dir: string, i: number) => events.slice(i + 1).some((e) => e.op === "fsync" && e.dir === dir);
      for (let i = checked; i < events.length; i++) {
        const e = events[i]!;
        if (e.op === "fsync") continue;
        const path = e.op === "rename" ? e.to : e.path;
        if (!existsSync(path)) continue; // a temp name renamed away, or removed: nothing to keep
        const dirs = e.op === "rename" ? [...new Set([dirname(e.from), dirname(e.to)])] : [dirname(path)];
        for (const dir of dirs) if (!syncedAfter(dir, i)) problems.push(`${e.op} ${path} (${dir} not fsynced after)`);
      }
      checked = events.length;
      return problems;
    },
    restore() {
      for (const [name, fn] of Object.entries(saved)) (io as Record<string, unknown>)[name] = fn;
    },
  };
}
