import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type * as Pi from "@earendil-works/pi-coding-agent";
import type * as Facade from "../../src/pi/index.ts";

// Compile-time checks (npm test type-checks test/): values of pi 1.5.2's types are accepted where the
// facade takes them, and what the facade returns is accepted where pi's types are expected.
type Accepts<T, U extends T> = U;
export type HeaderBothWays = [Accepts<Pi.SessionHeader, Facade.SessionHeader>, Accepts<Facade.SessionHeader, Pi.SessionHeader>];
export type InfoBothWays = [Accepts<Pi.SessionInfo, Facade.SessionInfo>, Accepts<Facade.SessionInfo, Pi.SessionInfo>];
export type EntryIntoFacade = Accepts<Facade.SessionEntry, Pi.SessionEntry>;
export type FileEntryIntoFacade = Accepts<Facade.FileEntry, Pi.FileEntry>;
export type EditIntoFacade = Accepts<Facade.ContextEditEntry, Pi.ContextEditEntry>;
export type CompactionIntoFacade = Accepts<Facade.CompactionEntry, Pi.CompactionEntry>;
export type NewSessionBothWays = [
  Accepts<Pi.NewSessionOptions, Facade.NewSessionOptions>,
  Accepts<Facade.NewSessionOptions, Pi.NewSessionOptions>,
];

const ROOT = join(import.meta.dirname, "../..");
const TSC = join(ROOT, "node_modules/.bin/tsc");
const CONSUMER = join(import.meta.dirname, "consumer");

function tsc(project: string): { status: number | null; output: string } {
  const run = spawnSync(TSC, ["-p", project], { cwd: ROOT, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("a strict consumer of pi 1.5.2's SDK", () => {
  it("compiles handing createAgentSession a transcript-store/pi/agent SessionManager, with no cast", () => {
    const run = tsc(join(CONSUMER, "tsconfig.json"));
    expect(run.output).toBe("");
    expect(run.status).toBe(0);
  });

  it("is refused the plain facade class (TS2740, pi's private fields): the reason the agent entry exists", () => {
    // The consumer without its @ts-expect-error, compiled beside it (same imports, same config).
    const dir = join(ROOT, "scratch", `consumer-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      const source = readFileSync(join(CONSUMER, "consumer.ts"), "utf8")
        .replace(/^ *\/\/ @ts-expect-error.*\n/m, "")
        .replaceAll("../../../src/", "../../src/");
      writeFileSync(join(dir, "consumer.ts"), source);
      writeFileSync(join(dir, "tsconfig.json"), readFileSync(join(CONSUMER, "tsconfig.json")));
      const run = tsc(join(dir, "tsconfig.json"));
      expect(run.status).not.toBe(0);
      expect(run.output).toMatch(/consumer\.ts\(\d+,\d+\): error TS2740: Type '.*src\/pi\/session-manager"\)\.SessionManager' is missing/);
      expect(run.output.match(/error TS/g)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
