import { BYTE_KINDS } from "../accounting/line-kinds.ts";
import type { SpaceRow, SpaceTotals } from "../accounting/du-report.ts";
import type { UsageGroup } from "../accounting/usage-report.ts";
import { escapeHtml as e } from "../interchange/html-text.ts";
import { barChart, bytes, money, sessionHref } from "./page.ts";

/** What the usage page draws: the same reports `usage --by …` and `du --by cwd` print. */
export interface UsagePageData {
  byDay: UsageGroup[];
  byModel: UsageGroup[];
  byCwd: UsageGroup[];
  bySession: UsageGroup[];
  total: UsageGroup;
  spaceByCwd: SpaceRow[];
  spaceTotals: SpaceTotals;
}

const tokens = (g: UsageGroup) => g.tokens.totalTokens;
const cost = (g: UsageGroup) => g.cost.total;

function costChart(title: string, groups: readonly UsageGroup[], limit: number): string {
  const rows = [...groups]
    .sort((a, b) => cost(b) - cost(a) || tokens(b) - tokens(a))
    .slice(0, limit)
    .map((g) => ({
      label: g.key,
      value: cost(g) || tokens(g) / 1e9,
      text: `${money(cost(g))} · ${tokens(g).toLocaleString("en")} tokens`,
    }));
  return rows.length === 0 ? `<p>No ${e(title.toLowerCase())} yet.</p>` : barChart(title, rows);
}

/** The usage and space page. */
export function usageHtml(d: UsagePageData): string {
  const days = [...d.byDay].sort((a, b) => (a.key < b.key ? -1 : 1)).slice(-60);
  const overTime =
    days.length === 0
      ? "<p>No model calls recorded.</p>"
      : barChart(
          "Cost per day (UTC), last 60 days with calls",
          days.map((g) => ({
            label: g.key,
            value: cost(g) || tokens(g) / 1e9,
            text: `${money(cost(g))} · ${tokens(g).toLocaleString("en")} tokens`,
          })),
        );
  const top = [...d.bySession].sort((a, b) => cost(b) - cost(a)).slice(0, 15);
  const topRows = top
    .map(
      (g) =>
        `<tr><td><a href="${e(sessionHref(g.key))}"><code>${e(g.key)}</code></a></td><td class="num">${g.calls}</td>` +
        `<td class="num">${tokens(g).toLocaleString("en")}</td><td class="num">${e(money(cost(g)))}</td></tr>`,
    )
    .join("");
  const kinds: Array<{ label: string; value: number; text: string }> = BYTE_KINDS.map((k) => ({
    label: k as string,
    value: d.spaceTotals.kinds[k],
    text: bytes(d.spaceTotals.kinds[k]),
  }));
  kinds.push({ label: "blobs (referenced)", value: d.spaceTotals.referencedBlobBytes, text: bytes(d.spaceTotals.referencedBlobBytes) });
  kinds.push({ label: "artifacts", value: d.spaceTotals.artifacts, text: bytes(d.spaceTotals.artifacts) });
  const cwdSpace = d.spaceByCwd.slice(0, 20).map((r) => ({ label: r.cwd, value: r.total, text: bytes(r.total) }));
  const t = d.total;
  return (
    `<h1>Usage and space</h1><p class="totals">${t.calls} model calls in ${t.sessions} sessions · ` +
    `${tokens(t).toLocaleString("en")} tokens · ` +
    `${e(money(cost(t)))} (the numbers of <code>transcript-store usage</code> and <code>du</code>)</p>` +
    `<section aria-label="Over time">${overTime}</section>` +
    `<section aria-label="By model">${costChart("By model", d.byModel, 20)}</section>` +
    `<section aria-label="By cwd">${costChart("By cwd", d.byCwd, 20)}</section>` +
    '<section aria-label="Most expensive sessions"><h2>Most expensive sessions</h2><table><thead><tr><th scope="col">session</th>' +
    '<th scope="col">calls</th><th scope="col">tokens</th><th scope="col">cost</th></tr></thead>' +
    `<tbody>${topRows}</tbody></table></section>` +
    `<section aria-label="Space by kind">${barChart(`Space by kind (${d.spaceTotals.sessions} sessions)`, kinds)}</section>` +
    `<section aria-label="Space by cwd">${cwdSpace.length === 0 ? "" : barChart("Space by cwd", cwdSpace)}</section>`
  );
}
