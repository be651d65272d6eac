import { describe, expect, it } from "vitest";
import { openSessionIndex } from "../../../../src/index.ts";
import { closeUrlStores } from "../../../../src/storage/store-url.ts";
import { message, session } from "../../../support/pg-search.ts";
import { freshStore } from "../../../support/pg-sessions.ts";
import { pgCluster } from "../../../support/postgres.ts";

describe.skipIf(!pgCluster())("openSessionIndex({ store }) on PostgreSQL", () => {
  it("opens the database's own index through the backend", async () => {
    const { store, url } = await freshStore();
    const s = await session(store, [message("user", "dispatched through the backend")]);
    try {
      const index = await openSessionIndex({ store: url });
      expect((await index.search("dispatched")).map((h) => h.sessionId)).toEqual([s.id]);
      expect(await index.status()).toMatchObject({ fresh: true, sessionsBehind: 0 });
    } finally {
      await closeUrlStores();
    }
  });
});
