import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";
import { pgCluster } from "../../../support/postgres.ts";
import { freshStore, headerLine, track } from "../../../support/pg-sessions.ts";

/** An ErrorResponse `FATAL 57P01`, as a server shutting down sends it. */
function fatalMessage(): Buffer {
  const fields = Buffer.concat([
    ...[
      ["S", "FATAL"],
      ["V", "FATAL"],
      ["C", "57P01"],
      ["M", "terminating connection due to administrator command"],
    ].map(([k, v]) => Buffer.from(`${k}${v}\0`)),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * A TCP proxy to the server that, for the first `cuts` connections, appends a FATAL error to the
 * very chunk that carries the end of the startup (ReadyForQuery) and then closes: the connection
 * is cut at the moment the pool hands it out.
 */
function cuttingProxy(target: URL, cuts: number): Promise<{ server: Server; url: string }> {
  let remaining = cuts;
  const server = createServer((client: Socket) => {
    const cut = remaining-- > 0;
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    let started = false;
    upstream.on("data", (chunk: Buffer) => {
      if (started || !cut) return void client.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (let at = 0; at + 5 <= pending.length; ) {
        const end = at + 1 + pending.readInt32BE(at + 1);
        if (end > pending.length) break;
        if (pending[at] === 0x5a /* Z */) {
          started = true;
          client.end(Buffer.concat([pending.subarray(0, end), fatalMessage()]));
          upstream.destroy();
          return;
        }
        at = end;
      }
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      const url = new URL(target.href);
      url.port = String(port);
      resolve({ server, url: url.href });
    }),
  );
}

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

describe.skipIf(!pgCluster())("PostgreSQL connection cut as it is handed out", () => {
  it("fails that call with PERSISTENCE_FAILED (the process survives) and the next call reconnects", async () => {
    const { url } = await freshStore();
    const { server, url: proxied } = await cuttingProxy(new URL(url), 1);
    servers.push(server);
    const store = track(await PgStore.connect(proxied, { migrate: false }));
    await expect(store.createSession(headerLine())).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    const { session } = await store.createSession(headerLine());
    expect((await store.getSession(session.id))?.id).toBe(session.id);
  });
});
