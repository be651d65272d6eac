import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { registeredBackends, storeUrlForms } from "../../src/storage/backend-registry.ts";
import { isStoreUrl, storeFromUrl } from "../../src/storage/store-url.ts";

const SRC = join(import.meta.dirname, "../../src");

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Places that choose a backend: they must go through the registry, never name one (docs/architecture.md, "add a storage backend"). */
const CHOOSERS = [
  ...filesUnder(join(SRC, "cli")),
  join(SRC, "storage/store-url.ts"),
  join(SRC, "storage/backends.ts"),
  join(SRC, "session/session-options.ts"),
];

describe("backends register themselves: nothing that picks a store names one", () => {
  it.each(CHOOSERS.map((path) => [path.slice(SRC.length + 1), path]))("%s names no backend class and no URL scheme", (_name, path) => {
    const text = readFileSync(path, "utf8");
    expect(text.match(/PostgresBackend|postgres(ql)?:\/\/|postgres\(ql\)/g)).toBeNull();
  });

  it("the registry knows the built-in database backend by its schemes, and nothing else", () => {
    expect(registeredBackends().flatMap((b) => b.schemes)).toEqual(["postgres", "postgresql"]);
    expect(storeUrlForms()).toBe("postgres:// or postgresql://");
    expect(isStoreUrl("postgresql://h/db")).toBe(true);
    expect(isStoreUrl("POSTGRES://h/db")).toBe(true);
    expect(isStoreUrl("mysql://h/db")).toBe(false);
    expect(isStoreUrl("/some/dir")).toBe(false);
    expect(() => storeFromUrl("mysql://u:secret@h/db")).toThrow(
      /must start with postgres:\/\/ or postgresql:\/\/ \(got "mysql:\/\/u:\*\*\*@h\/db"\)/,
    );
  });
});
