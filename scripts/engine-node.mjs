#!/usr/bin/env node
// Runs a command (`npm start`'s and `npm test`'s own) on a Node that satisfies `engines`: this one when
// it does, else the pinned Node 22 of .ci/runtimes (as .ci/run does), installed there on first use
// (`npm ci --omit=optional`: Node 22 alone) and said in one line. Plain JavaScript, so an old Node runs it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { requiredNode, satisfies } from "../bin/node-engine.mjs";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write("usage: node scripts/engine-node.mjs <command> [args…]\n");
  process.exit(2);
}
const repo = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const runtimes = join(repo, ".ci", "runtimes");
const node22 = join(runtimes, "node_modules", "node22");
let env = process.env;
if (!satisfies(process.versions.node, requiredNode())) {
  const pinned = JSON.parse(readFileSync(join(runtimes, "package.json"), "utf8"))
    .dependencies.node22.split("@")
    .at(-1);
  const why = `Node ${process.version} is older than engines ${requiredNode()}`;
  if (!existsSync(join(node22, "bin", "node"))) {
    process.stderr.write(`${why}: installing the pinned Node ${pinned} into .ci/runtimes (once) and running on it\n`);
    const install = spawnSync("npm", ["ci", "--prefix", runtimes, "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (install.status !== 0) {
      process.stderr.write(`installing Node ${pinned} failed; install Node ${requiredNode()} yourself (README, Supported runtimes)\n`);
      process.exit(1);
    }
  } else process.stderr.write(`${why}: running on the pinned Node ${pinned} of .ci/runtimes\n`);
  env = { ...process.env, PATH: `${join(node22, "bin")}${delimiter}${process.env.PATH ?? ""}` };
}
const run = spawnSync(command, args, { stdio: "inherit", env });
if (run.error !== undefined) throw run.error;
process.exit(run.status ?? 1);
