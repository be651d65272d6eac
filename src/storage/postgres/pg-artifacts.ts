import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isTempName } from "../../artifacts/artifact-files.ts";
import { ArtifactStore } from "../../artifacts/artifact-store.ts";
import type { StoreWarning } from "../../errors.ts";
import type { PgStore } from "../../postgres/index.ts";

const SAFE_NAME = /^[A-Za-z0-9._-]{1,200}$/;

interface Synced {
  size: number;
  mtimeMs: number;
}

/**
 * A database session's artifacts: rows of the session (`artifacts`), worked on through the same
 * `ArtifactStore` as a file session, over a private working directory. Opening a session fills the
 * directory from its rows; `flush()` (and `close()`) writes back what changed — new and rewritten
 * files as rows, removed files as deleted rows. The directory is removed on close.
 */
export class PgArtifactMirror {
  private parent: string | null = null;
  private dir: string | null = null;
  private store: ArtifactStore | null = null;
  private readonly synced = new Map<string, Synced>();

  constructor(
    private readonly pg: PgStore,
    private readonly sessionId: string,
    private readonly options: { fsync: boolean; onWarning: (w: StoreWarning) => void },
  ) {}

  /** Fills the working directory from the session's rows. */
  async load(): Promise<void> {
    const infos = await this.pg.artifacts.list(this.sessionId);
    if (infos.length === 0) return; // no working directory until there is something to hold
    const dir = this.ensureDir();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const info of infos) {
      const artifact = await this.pg.artifacts.get(this.sessionId, info.id);
      if (artifact === null) continue;
      const path = join(dir, info.id);
      writeFileSync(path, artifact.content, { mode: 0o600, flag: "wx" });
      const mtimeMs = typeof artifact.meta.mtimeMs === "number" ? artifact.meta.mtimeMs : artifact.created.getTime();
      utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
      const st = statSync(path);
      this.synced.set(info.id, { size: st.size, mtimeMs: st.mtimeMs });
    }
  }

  artifacts(): ArtifactStore {
    if (this.store === null) this.store = new ArtifactStore(this.ensureDir(), this.options);
    return this.store;
  }

  /** Writes what changed in the working directory back to rows, fenced by the writer's lease `token`. */
  async sync(token: number): Promise<void> {
    if (this.dir === null) return;
    const seen = new Set<string>();
    // The store creates its directory on its first write: none yet is no artifacts yet.
    const entries = existsSync(this.dir) ? readdirSync(this.dir, { withFileTypes: true }) : [];
    for (const entry of entries) {
      if (!entry.isFile() || isTempName(entry.name)) continue;
      if (!SAFE_NAME.test(entry.name)) {
        this.options.onWarning({
          code: "PERSISTENCE_FAILED",
          message: `Artifact file ${entry.name} has no storable name; kept locally only`,
        });
        continue;
      }
      seen.add(entry.name);
      const path = join(this.dir, entry.name);
      const st = statSync(path);
      const before = this.synced.get(entry.name);
      if (before !== undefined && before.size === st.size && before.mtimeMs === st.mtimeMs) continue;
      await this.pg.artifacts.put(this.sessionId, entry.name, readFileSync(path), { mtimeMs: st.mtimeMs }, token);
      this.synced.set(entry.name, { size: st.size, mtimeMs: st.mtimeMs });
    }
    for (const name of [...this.synced.keys()]) {
      if (seen.has(name)) continue;
      await this.pg.artifacts.delete(this.sessionId, name, token);
      this.synced.delete(name);
    }
  }

  dispose(): void {
    if (this.parent !== null) rmSync(this.parent, { recursive: true, force: true });
    this.parent = null;
    this.dir = null;
    this.store = null;
  }

  private ensureDir(): string {
    if (this.dir === null) {
      this.parent = mkdtempSync(join(tmpdir(), "ts-pg-artifacts-"));
      this.dir = join(this.parent, "artifacts");
    }
    return this.dir;
  }
}
