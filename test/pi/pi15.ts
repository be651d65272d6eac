import { describe } from "vitest";

/**
 * pi 1.5.2 (`@earendil-works/pi-coding-agent`) needs Node >= 22.19: it does not even load on
 * older Node. Tests that run the real pi 1.5.2 skip there, with one loud line per file; CI runs
 * them on Node 22.
 */
function nodeAtLeast(major: number, minor: number): boolean {
  const [a, b] = process.versions.node.split(".").map(Number) as [number, number];
  return a > major || (a === major && b >= minor);
}

export const PI15_RUNS = nodeAtLeast(22, 19);

/** `describe` when pi 1.5.2 can run here, else `describe.skip` after one loud line naming the file. */
export function describePi15(file: string): typeof describe | typeof describe.skip {
  if (PI15_RUNS) return describe;
  console.warn(`SKIPPED ${file}: real pi 1.5.2 needs Node >= 22.19, this is Node ${process.versions.node} (CI runs it on Node 22)`);
  return describe.skip;
}

type Pi = typeof import("@earendil-works/pi-coding-agent");
type PiAi = typeof import("@earendil-works/pi-ai");

/** pi 1.5.2's main entry, loaded only where it can run. */
export async function loadPi(): Promise<Pi> {
  return import("@earendil-works/pi-coding-agent");
}

/** pi-ai 1.5.2 (faux provider, transcript helpers), loaded only where it can run. */
export async function loadPiAi(): Promise<PiAi> {
  return import("@earendil-works/pi-ai");
}
