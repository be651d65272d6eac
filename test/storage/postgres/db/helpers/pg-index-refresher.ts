// A search index refresher in its own process, for the crash test. Argument: JSON { url, killBeforeCommit }.
// It refreshes the index of the database at `url` through a pool whose clients kill this process
// (SIGKILL, no cleanup) just before sending their `killBeforeCommit`-th COMMIT: the batches before it
// are committed, that one is in flight. Exits 0 ("done") if the refresh ends first.
import pg from "pg";
import { PgSessionIndex } from "../../../../../src/storage/postgres/pg-index.ts";

const args = JSON.parse(process.argv[2]!) as { url: string; killBeforeCommit: number };
const pool = new pg.Pool({ connectionString: args.url, max: 2 });
pool.on("error", () => {});
let commits = 0;
const patched = new WeakSet<object>();
const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
(pool as unknown as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
  const client = await connect();
  if (!patched.has(client)) {
    patched.add(client);
    const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
    (client as unknown as { query: typeof query }).query = (text: string, values?: unknown[]) => {
      if (text === "COMMIT" && ++commits === args.killBeforeCommit) process.kill(process.pid, "SIGKILL");
      return query(text, values);
    };
  }
  return client;
};
const index = await PgSessionIndex.open(pool, { readOnly: false, name: "pg" });
await index.refresh();
process.stdout.write("done\n");
await pool.end();
