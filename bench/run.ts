// `npm run bench [-- --only append,open] [--size 50MB] [--corpus 10k] [--repeats 5] [--json out.json] [--compare old.json] [--quick]`
// `npm run bench -- --only list-index [--list-sessions 10000]`: the first `ls` from a warm index (2,000 sessions by default).
// `npm run bench -- --store postgres [--url postgres://…] [--only pg-append,…]`: the PostgreSQL backend's scenarios, against a
// throwaway cluster the run starts (or the server --url names; each scenario makes and drops a database of its own).
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { benchAppend } from "./scenarios/append.ts";
import { benchAppendEncrypted } from "./scenarios/append-encrypted.ts";
import { benchBundle } from "./scenarios/bundle.ts";
import { benchExternalize } from "./scenarios/externalize.ts";
import { benchFork } from "./scenarios/fork.ts";
import { benchForeignImport } from "./scenarios/foreign-import.ts";
import { benchIndex } from "./scenarios/index.ts";
import { benchStartup } from "./scenarios/startup.ts";
import { benchList } from "./scenarios/list.ts";
import { benchListIndex } from "./scenarios/list-index.ts";
import { benchManySessions } from "./scenarios/many-sessions.ts";
import { benchMigrate } from "./scenarios/migrate.ts";
import { benchOpen } from "./scenarios/open.ts";
import { benchOpenLazy } from "./scenarios/open-lazy.ts";
import { benchPgAppend } from "./scenarios/pg-append.ts";
import { benchRedact } from "./scenarios/redact.ts";
import { benchViewer } from "./scenarios/viewer.ts";
import { benchPgAppend8 } from "./scenarios/pg-append-8.ts";
import { benchPgAppendEncrypted } from "./scenarios/pg-append-encrypted.ts";
import { benchPgFork } from "./scenarios/pg-fork.ts";
import { benchPgList } from "./scenarios/pg-list.ts";
import { benchPgOpen } from "./scenarios/pg-open.ts";
import { benchServer } from "./helpers/pg-cluster.ts";
import type { BenchContext, BenchRow } from "./types.ts";

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<BenchRow[]>> = {
  append: benchAppend,
  "append-encrypted": benchAppendEncrypted,
  open: benchOpen,
  "open-lazy": benchOpenLazy,
  externalize: benchExternalize,
  migrate: benchMigrate,
  list: benchList,
  "list-index": benchListIndex,
  fork: benchFork,
  "many-sessions": benchManySessions,
  "foreign-import": benchForeignImport,
  bundle: benchBundle,
  index: benchIndex,
  startup: benchStartup,
  redact: benchRedact,
  viewer: benchViewer,
};

const PG_SCENARIOS: Record<string, (ctx: BenchContext) => Promise<BenchRow[]>> = {
  "pg-append": benchPgAppend,
  "pg-append-8": benchPgAppend8,
  "pg-append-encrypted": benchPgAppendEncrypted,
  "pg-open": benchPgOpen,
  "pg-list": benchPgList,
  "pg-fork": benchPgFork,
};

function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(kb|mb|gb)?$/i.exec(text.trim());
  if (!m) throw new Error(`bad --size ${text}`);
  const unit = (m[2] ?? "mb").toLowerCase();
  return Math.round(Number(m[1]) * (unit === "kb" ? 1e3 : unit === "gb" ? 1e9 : 1e6));
}

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    size: { type: "string", default: "50MB" },
    repeats: { type: "string", default: "5" },
    json: { type: "string" },
    compare: { type: "string" },
    quick: { type: "boolean", default: false },
    store: { type: "string", default: "file" },
    url: { type: "string" },
    "list-sessions": { type: "string" },
    corpus: { type: "string" },
  },
});

if (values.store !== "file" && values.store !== "postgres") throw new Error(`--store is file or postgres, not ${values.store}`);
const scenarios = values.store === "postgres" ? PG_SCENARIOS : SCENARIOS;
const only = values.only ? values.only.split(",").map((s) => s.trim()) : Object.keys(scenarios);
for (const name of only) if (!(name in scenarios)) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(", ")}`);
const ctx: BenchContext = { sizeBytes: parseSize(values.size!), repeats: Math.max(1, Number(values.repeats)), quick: values.quick! };
if (values["list-sessions"] !== undefined) ctx.listSessions = Math.max(1, Number(values["list-sessions"]));
if (values.corpus !== undefined && values.corpus !== "10k") throw new Error(`--corpus is 10k, not ${values.corpus}`);
ctx.corpus = values.corpus;

const fmt = (n: number | null) => (n === null ? "—" : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const rows: BenchRow[] = [];
const server = values.store === "postgres" ? await benchServer(values.url) : null;
if (server !== null) {
  // An interrupted run still stops and removes the cluster it started; the connections that the
  // stop cuts then fail in the scenarios, which is expected and no reason to die before the removal.
  let stopping = false;
  process.once("SIGINT", () => {
    stopping = true;
    void server.stop().finally(() => process.exit(130));
  });
  process.on("uncaughtException", (err) => {
    if (stopping) return;
    console.error(err);
    process.exit(1);
  });
}
try {
  if (server !== null) ctx.pgUrl = server.url;
  for (const name of only) {
    process.stderr.write(`running ${name}…\n`);
    rows.push(...(await scenarios[name]!(ctx)));
  }
} finally {
  await server?.stop();
}

const previous: BenchRow[] = values.compare ? JSON.parse(readFileSync(values.compare, "utf8")).rows : [];
console.log(`\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; medians of ${ctx.repeats} runs\n`);
console.log(`| scenario | ours | baseline | ratio | target | met |${previous.length ? " previous ratio |" : ""}`);
console.log(`|---|---|---|---|---|---|${previous.length ? "---|" : ""}`);
for (const r of rows) {
  const prev = previous.find((p) => p.scenario === r.scenario);
  const met = r.met === null ? "—" : r.met ? "yes" : "no";
  console.log(
    `| ${r.scenario} | ${fmt(r.ours)} ${r.unit} | ${r.baseline === null ? "—" : `${fmt(r.baseline)} ${r.unit} (${r.baselineName})`} ` +
      `| ${r.ratio === null ? "—" : `${fmt(r.ratio)}×`} | ${r.target} | ${met} |` +
      `${previous.length ? ` ${prev?.ratio == null ? "—" : `${fmt(prev.ratio)}×`} |` : ""}`,
  );
}
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify({ node: process.version, cpu: cpus()[0]?.model, store: values.store, date: new Date().toISOString(), rows }, null, 2),
  );
