import type { StorageBackend } from "./session-storage.ts";

/** How a store URL is opened beyond the URL itself (the CLI's: a read-only command's `migrate: "check"`, a schema). */
export interface StoreConnectOptions {
  migrate?: boolean | "check";
  schema?: string;
}

/**
 * A backend that sessions can live in besides the file tree, as a store URL names it. Each backend
 * registers one of these (`storage/builtin-backends.ts` lists the built-in ones); nothing else in
 * the library or the CLI names a backend class or a URL scheme.
 */
export interface BackendFactory {
  /** URL schemes without `://` (`postgres`, `postgresql`). */
  schemes: readonly string[];
  /** What the store is, for help and messages (`a PostgreSQL store`). */
  description: string;
  /** A backend over `url`; it connects on first use. */
  open(url: string, options: StoreConnectOptions): StorageBackend;
}

const factories: BackendFactory[] = [];

/** Makes a backend reachable by its URL schemes (a scheme registered twice: the later one wins). */
export function registerBackend(factory: BackendFactory): void {
  factories.unshift(factory);
}

/** The scheme of a URL (`postgres` of `postgres://…`), or null when it has none. */
export function schemeOf(url: string): string | null {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  return m === null ? null : m[1]!.toLowerCase();
}

/** The factory registered for `url`'s scheme, or null. */
export function factoryFor(url: string): BackendFactory | null {
  const scheme = schemeOf(url);
  return scheme === null ? null : (factories.find((f) => f.schemes.includes(scheme)) ?? null);
}

/** The registered URL forms, for messages: `postgres:// or postgresql://`. */
export function storeUrlForms(): string {
  const forms = factories.flatMap((f) => f.schemes.map((s) => `${s}://`));
  return forms.length === 0 ? "(no store backend registered)" : forms.join(" or ");
}

/** One line per registered backend, for help: `postgres://…  a PostgreSQL store`. */
export function registeredBackends(): ReadonlyArray<Pick<BackendFactory, "schemes" | "description">> {
  return factories.map(({ schemes, description }) => ({ schemes, description }));
}
