// `pg-gc-child.ts <url>`: one database gc with no grace period; prints the hashes it deleted (JSON).
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";

const store = await PgStore.connect(process.argv[2]!);
try {
  process.stdout.write(JSON.stringify((await store.gc({ graceMs: 0 })).deleted));
} finally {
  await store.close();
}
