import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, npm_config_fund: "false", npm_config_audit: "false" },
  });
}

describe("the packed package, installed into an empty project", () => {
  it("imports, type-checks against its declarations, runs, and ships its LICENSE and binary", () => {
    // `npm test` builds dist/ first; packing without scripts never rebuilds it under other tests' feet.
    expect(existsSync(join(REPO_ROOT, "dist", "index.js")), "dist/ is built by `npm test` (npm run build)").toBe(true);
    const packDir = tempDir("ts-pack-");
    run(NPM, ["pack", "--ignore-scripts", "--pack-destination", packDir], REPO_ROOT);
    const tarball = readdirSync(packDir).find((n) => n.endsWith(".tgz"));
    expect(tarball).toBeDefined();

    const consumer = tempDir("ts-consumer-");
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", type: "module", private: true }));
    run(NPM, ["install", "--prefer-offline", "--no-package-lock", join(packDir, tarball!)], consumer);
    const installed = join(consumer, "node_modules", "transcript-store");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(readdirSync(installed)).toContain("LICENSE");
    // no build tool at run time: the package runs from its compiled dist
    expect(Object.keys(manifest.dependencies)).not.toContain("tsx");
    expect(Object.keys(manifest.dependencies)).not.toContain("typescript");
    // no type package comes through our dependencies (`@types/pg` pulled the newest `@types/node`): the
    // declarations reference only node: modules (the consumer's own @types/node) and the optional pi peer
    expect(existsSync(join(consumer, "node_modules", "@types")), "node_modules/@types of an untyped consumer").toBe(false);

    const root = join(consumer, "store");
    // One program, typed (checked by tsc against the installed declarations) and plain (run by node).
    const program = (typed: boolean) =>
      [
        `import { PgStore, SessionManager${typed ? ", type SessionEntry" : ""} } from "transcript-store";`,
        'import pg from "pg";',
        'import { SessionManager as PiSessionManager } from "transcript-store/pi";',
        `const root = ${JSON.stringify(root)};`,
        "const session = await SessionManager.create(process.cwd(), { root });",
        `const id${typed ? ": string" : ""} = session.appendMessage({ role: "user", content: "hello from a consumer" });`,
        "await session.close();",
        `const again = await SessionManager.open(session.sessionFile${typed ? "!" : ""}, { root, readOnly: true });`,
        `const entries${typed ? ": SessionEntry[]" : ""} = again.getEntries();`,
        "await again.close();",
        `const pi = PiSessionManager.create(process.cwd(), ${JSON.stringify(join(consumer, "pi-sessions"))});`,
        'pi.appendMessage({ role: "user", content: "hello from a pi caller", timestamp: Date.now() });',
        "const piEntries = pi.getEntries().length;",
        // a pg.Pool of the consumer's is accepted where the store takes one (types and run time)
        'const pool = new pg.Pool({ connectionString: "postgres://127.0.0.1:1/none", max: 1 });',
        "const pgStore = await PgStore.connect(pool, { migrate: false });",
        "await pgStore.close();",
        "await pool.end();",
        `const ok = entries.length === 1 && entries[0]${typed ? "!" : ""}.id === id && piEntries === 1;`,
        'console.log(ok ? "ok" : "mismatch");',
        "",
      ].join("\n");
    writeFileSync(join(consumer, "consumer.ts"), program(true));
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          typeRoots: [join(REPO_ROOT, "node_modules", "@types")],
          types: ["node"],
          // the consumer's own pg types (our declarations need none)
          paths: { pg: [join(REPO_ROOT, "node_modules", "@types", "pg", "index.d.ts")] },
        },
        files: ["consumer.ts"],
      }),
    );
    run(process.execPath, [join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], consumer);
    writeFileSync(join(consumer, "consumer.mjs"), program(false));
    expect(run(process.execPath, ["consumer.mjs"], consumer).trim()).toBe("ok");
    expect(run(process.execPath, [join(consumer, "node_modules", ".bin", "transcript-store"), "--help"], consumer)).toMatch(
      /transcript-store/,
    );
  }, 180_000);
});
