#!/usr/bin/env node
// Thin stub: load the TypeScript sources through tsx and hand over to main(argv, io).
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/run.ts");
process.exitCode = await runCli(process.argv.slice(2));
