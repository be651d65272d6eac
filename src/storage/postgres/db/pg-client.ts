/**
 * The part of node-postgres's `Pool` and `PoolClient` this package calls, declared here so that the
 * published declarations never import `pg`'s types: a TypeScript consumer needs no `@types/pg` (nor
 * the newest `@types/node` it pulls in), and a `pg.Pool` of yours is still accepted as one (checked by
 * test/package/packed-tarball.test.ts against `@types/pg`).
 */

/** What a query resolves to: the rows, and how many the statement touched. */
export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number | null;
}

/** A connection taken from the pool for one transaction or one statement sequence. */
export interface PoolClient {
  // biome-ignore lint/suspicious/noExplicitAny: rows are any unless the caller names their shape, as in pg
  query<Row = any>(text: string, values?: unknown[]): Promise<QueryResult<Row>>;
  /** Back to the pool; `true` or an error destroys the connection instead. */
  release(destroy?: boolean | Error): void;
  on(event: "error", listener: (err: Error) => void): unknown;
  off(event: "error", listener: (err: Error) => void): unknown;
}

/** A pool of connections (`new pg.Pool(…)`). */
export interface Pool {
  // biome-ignore lint/suspicious/noExplicitAny: rows are any unless the caller names their shape, as in pg
  query<Row = any>(text: string, values?: unknown[]): Promise<QueryResult<Row>>;
  connect(): Promise<PoolClient>;
  end(): Promise<void>;
  on(event: "error", listener: (err: Error) => void): unknown;
  on(event: "connect", listener: (client: PoolClient) => void): unknown;
}
