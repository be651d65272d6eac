/** A node of a PostgreSQL `EXPLAIN (FORMAT JSON)` plan: the fields the plan tests read. */
export interface PlanNode {
  "Node Type": string;
  "Actual Loops"?: number;
  "Actual Rows"?: number;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Rows Removed by Filter"?: number;
  "Workers Planned"?: number;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan, the root first. */
export const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** The rows a plan's scans of `table` read (returned or filtered out, over every loop); needs ANALYZE. */
export const rowsRead = (nodes: PlanNode[], table: string): number =>
  nodes
    .filter((n) => n["Relation Name"] === table)
    .reduce((sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1), 0);

/** The mark a search-index refresh would leave now: the oldest transaction still running. */
export const MARK_NOW = "SELECT txid_snapshot_xmin(txid_current_snapshot())::text AS mark";
