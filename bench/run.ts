// `npm run bench [-- --only append,open] [--size 50MB] [--repeats 5] [--json out.json] [--compare old.json] [--quick]`
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { benchAppend } from "./scenarios/append.ts";
import { benchExternalize } from "./scenarios/externalize.ts";
import { benchFork } from "./scenarios/fork.ts";
import { benchList } from "./scenarios/list.ts";
import { benchManySessions } from "./scenarios/many-sessions.ts";
import { benchMigrate } from "./scenarios/migrate.ts";
import { benchOpen } from "./scenarios/open.ts";
import { benchOpenLazy } from "./scenarios/open-lazy.ts";
import type { BenchContext, BenchRow } from "./types.ts";

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<BenchRow[]>> = {
  append: benchAppend,
  open: benchOpen,
  "open-lazy": benchOpenLazy,
  externalize: benchExternalize,
  migrate: benchMigrate,
  list: benchList,
  fork: benchFork,
  "many-sessions": benchManySessions,
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
  },
});

const only = values.only ? values.only.split(",").map((s) => s.trim()) : Object.keys(SCENARIOS);
for (const name of only) if (!(name in SCENARIOS)) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(", ")}`);
const ctx: BenchContext = { sizeBytes: parseSize(values.size!), repeats: Math.max(1, Number(values.repeats)), quick: values.quick! };

const fmt = (n: number | null) => (n === null ? "—" : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const rows: BenchRow[] = [];
for (const name of only) {
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await SCENARIOS[name]!(ctx)));
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
    JSON.stringify({ node: process.version, cpu: cpus()[0]?.model, date: new Date().toISOString(), rows }, null, 2),
  );
