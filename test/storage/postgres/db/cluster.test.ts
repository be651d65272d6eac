import { describe, expect, it } from "vitest";
import { psql } from "../../../support/pg-cluster.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

const cluster = pgCluster();

describe.skipIf(!cluster)("the test cluster", () => {
  it("gives each caller its own empty database on the run's server", async () => {
    const a = await freshDatabase();
    const b = await freshDatabase();
    expect(a).not.toBe(b);
    await psql(cluster!.binDir, a, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
    expect((await psql(cluster!.binDir, a, "SELECT count(*) FROM t")).trim()).toBe("1");
    expect((await psql(cluster!.binDir, b, "SELECT count(*) FROM pg_tables WHERE tablename = 't'")).trim()).toBe("0");
  });
});
