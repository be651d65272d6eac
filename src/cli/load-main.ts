import type { CliIo } from "./context.ts";

/**
 * Runs one CLI invocation (see `main` in main.ts). The CLI's modules and dependencies (`cli-progress`,
 * `ndjson`, `fast-glob`) load on the first call, so that importing the library never loads them.
 */
export async function main(argv: string[], streams: CliIo): Promise<number> {
  const cli = await import("./main.ts");
  return cli.main(argv, streams);
}
