import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { bundle } from "../../bundle/bundle-pack.ts";
import { unbundle } from "../../bundle/bundle-restore.ts";
import { parseCwdMap } from "../../bundle/cwd-map.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { writeNewOutput } from "../output-file.ts";
import { commandInput, printWarning, storeOptions, type Command, UsageError } from "../context.ts";
import { sealImported, sealsNewSessions } from "../write-redaction.ts";
import { terminalText } from "../terminal-text.ts";
import { resolveArg } from "../resolve-session.ts";

/** Streams `bytes` to the process's stdout, waiting on the reader (a pipe to ssh). */
async function pipeArchive(bytes: Readable, out: Writable): Promise<number> {
  let size = 0;
  for await (const chunk of bytes) {
    size += (chunk as Buffer).length;
    if (!out.write(chunk)) {
      await new Promise<void>((done) => {
        const settle = () => {
          out.off("drain", settle).off("error", settle).off("close", settle);
          done();
        };
        out.once("drain", settle).once("error", settle).once("close", settle);
      });
    }
  }
  return size;
}

export const bundleCommand: Command = {
  name: "bundle",
  readOnly: true,
  summary:
    "write sessions with their blobs and artifacts as one tar archive (a manifest of sha256 hashes) to stdout or -o <file> " +
    "(secrets redacted unless --no-redact)",
  usage: "bundle <id>… [-o <file> [--force]] [--compress] [--no-redact]",
  options: {
    output: { type: "string", short: "o" },
    force: { type: "boolean", default: false },
    compress: { type: "boolean", default: false },
    "no-redact": { type: "boolean", default: false },
  },
  minArgs: 1,
  async run(ctx) {
    const output = ctx.values.output as string | undefined;
    const out = ctx.io.stdoutBytes;
    if (output === undefined && ctx.io.stdoutIsTTY === true) {
      throw new UsageError("bundle: stdout is a terminal; pipe it (bundle <id> | ssh host transcript-store unbundle -) or give -o <file>");
    }
    if (output === undefined && out === undefined) throw new UsageError("bundle: no byte stdout here; give -o <file>");
    const ids: string[] = [];
    for (const arg of ctx.positionals) ids.push((await resolveArg(ctx, arg)).id);
    // Shared output is redacted unless asked otherwise (README, Privacy): the warning lists the counts per rule.
    const redacted = ctx.values["no-redact"] !== true;
    if (output === undefined && ctx.values.force === true) throw new UsageError("bundle: --force needs -o (it replaces that file)");
    const compress = ctx.values.compress === true ? ("gzip" as const) : undefined;
    const bytes = bundle(ids, { ...storeOptions(ctx), redactOutput: redacted, compress, onWarning: printWarning(ctx.io) });
    const size =
      output === undefined
        ? await pipeArchive(bytes, out!)
        : await writeNewOutput(resolve(ctx.io.cwd, output), bytes as AsyncIterable<Buffer>, { force: ctx.values.force === true });
    // The archive owns stdout: the summary goes to stderr (and, with -o, the records to stdout).
    const text = terminalText`bundled ${ids.length} session(s), ${size} bytes${output === undefined ? "" : ` into ${output}`}`;
    if (output !== undefined) ctx.emit({ type: "bundled", sessions: ids, bytes: size, redacted, path: resolve(ctx.io.cwd, output) }, text);
    else ctx.io.stderr(`${text}\n`);
    return 0;
  },
};

export const unbundleCommand: Command = {
  name: "unbundle",
  summary:
    "restore a bundle (a file, or - for stdin) into the store after checking every member; --cwd-map old=new moves sessions to another cwd",
  usage: "unbundle <file|-> [--cwd-map old=new]… [--dry-run]",
  createsStore: true,
  options: { "cwd-map": { type: "string", multiple: true }, "dry-run": { type: "boolean", default: false } },
  minArgs: 1,
  maxArgs: 1,
  async run(ctx) {
    let cwdMap;
    try {
      cwdMap = parseCwdMap((ctx.values["cwd-map"] as string[] | undefined) ?? []);
    } catch (err) {
      if (err instanceof TranscriptStoreError) throw new UsageError(`unbundle: ${err.message}`);
      throw err;
    }
    const file = ctx.positionals[0]!;
    const seal = ctx.values["dry-run"] !== true && sealsNewSessions(ctx);
    const source = commandInput(ctx, file);
    const report = await unbundle(source, {
      ...storeOptions(ctx),
      cwdMap,
      dryRun: ctx.values["dry-run"] === true,
      onWarning: printWarning(ctx.io),
    });
    // Sessions that came in clear are sealed at once in a store that encrypts new sessions (or with a key).
    for (const s of report.sessions) if (seal && s.status === "created" && s.location !== null) await sealImported(ctx, s.location);
    const would = report.dryRun ? "would be " : "";
    for (const s of report.sessions) {
      const where = s.location === null ? "" : ` ${s.location}`;
      ctx.emit(
        { type: "unbundled", ...s, redacted: report.redacted, dryRun: report.dryRun },
        terminalText`${would}${s.status} ${s.id} (${s.lines} lines, ${s.artifacts} artifact(s), cwd ${s.cwd})${where}`,
      );
    }
    if (report.missingBlobs.length > 0) {
      ctx.io.stderr(
        `warning: ${report.missingBlobs.length} blob(s) the sessions reference were not in the bundle (their source lacked them)\n`,
      );
    }
    return 0;
  },
};
