import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { backendsOf, checkBackendNames } from "../../scripts/backend-names.ts";
import { formatViolation } from "../../scripts/import-rules.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A tree of `src/` files (path → source) in a temp dir. */
function tree(files: Record<string, string>): string {
  const root = tempDir("ts-backend-names-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A backend folder as the rule reads it: its class, its kind string, its schemes. */
const BACKEND = {
  "src/storage/session-storage.ts": "export interface StorageBackend { kind: string }\n",
  "src/storage/acme/acme-backend.ts": 'export class AcmeBackend {\n  readonly kind = "acme";\n}\n',
  "src/storage/acme/acme-register.ts": 'registerBackend({ schemes: ["acmedb", "acmes"], open: () => null });\n',
  "src/storage/builtin-backends.ts": 'import "./acme/acme-register.ts";\n',
};

describe("no backend is named outside its folder and the registry", () => {
  it("holds for src/", () => {
    expect(checkBackendNames(REPO_ROOT).map(formatViolation)).toEqual([]);
  });

  it("reads each backend's class, kind and schemes from its folder", () => {
    expect(backendsOf(tree(BACKEND), {})).toEqual([
      { name: "acme", folders: ["src/storage/acme/"], identifiers: ["AcmeBackend"], kinds: ["acme"], schemes: ["acmedb", "acmes"] },
    ]);
  });

  it("fails on a planted violation of each kind: class, kind string, scheme, import of the folder", () => {
    const root = tree({
      ...BACKEND,
      "src/maintenance/service.ts": [
        'import type { AcmeBackend } from "../storage/acme/acme-backend.ts";', // 1: import (type-only too) and class
        'export const a = (s: { kind: string }) => s.kind === "acme";', // 2: kind compared
        'export const b = "acmedb://host/db";', // 3: scheme
        "export const c = (x: unknown) => x instanceof (null as unknown as typeof AcmeBackend);", // 4: class
        "// AcmeBackend in a comment, acme:// too, is not a violation",
        'export const d = (t: { type: string }) => t.type === "acme-free text";',
      ].join("\n"),
    });
    const found = checkBackendNames(root, ["src/storage/builtin-backends.ts"]).map(formatViolation);
    expect(found).toEqual([
      expect.stringMatching(/^src\/maintenance\/service\.ts:1: .*imports src\/storage\/acme\/acme-backend\.ts, inside the acme backend/),
      expect.stringMatching(/^src\/maintenance\/service\.ts:1: .*names the acme backend \(AcmeBackend\)/),
      expect.stringMatching(/^src\/maintenance\/service\.ts:2: .*names the acme backend \(its kind "acme"\)/),
      expect.stringMatching(/^src\/maintenance\/service\.ts:3: .*names the acme backend \(the scheme acmedb\)/),
      expect.stringMatching(/^src\/maintenance\/service\.ts:4: .*names the acme backend \(AcmeBackend\)/),
    ]);
  });

  it("lets the backend's own folder and the registry name it", () => {
    expect(checkBackendNames(tree(BACKEND), ["src/storage/builtin-backends.ts"])).toEqual([]);
  });

  it("runs as the gate's script: exit 1 naming file and line", () => {
    const root = tree({ ...BACKEND, "src/cli/x.ts": 'export const url = "acmes://h";\n' });
    const run = spawnSync(process.execPath, [join(REPO_ROOT, "scripts/backend-names.ts"), root], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^src\/cli\/x\.ts:1: \[layer\] names the acme backend \(the scheme acmes\)/m);
    const clean = spawnSync(process.execPath, [join(REPO_ROOT, "scripts/backend-names.ts"), REPO_ROOT], { encoding: "utf8" });
    expect(clean.stderr).toBe("");
    expect(clean.status).toBe(0);
  });
});
