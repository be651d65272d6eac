#!/usr/bin/env node
// Thin stub: run the compiled CLI (built by `npm run build`, which `npm start` and `npm test` run), or the TypeScript
// sources through tsx in a checkout that has not been built.
import { existsSync } from "node:fs";
import { requiredNode, satisfies } from "./node-engine.mjs";

// On a Node older than `engines`, one line naming the Node it needs, before anything fails obscurely.
if (!satisfies(process.versions.node, requiredNode())) {
  const line = `transcript-store: needs Node ${requiredNode()} (this is Node ${process.version}); see the README's Supported runtimes`;
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

const compiled = new URL("../dist/cli/run.js", import.meta.url);
let runCli;
if (existsSync(compiled)) {
  ({ runCli } = await import(compiled.href));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ runCli } = await import("../src/cli/run.ts"));
}
process.exitCode = await runCli(process.argv.slice(2));
