// Placeholder from the lead so the session module can import it; the artifacts helper replaces this file entirely.
import type { WarningHandler } from "../errors.ts";

export interface ArtifactStoreOptions {
  now?: () => number;
  onWarning?: WarningHandler;
}

export class ArtifactStore {
  readonly dir: string;
  constructor(dir: string, _options: ArtifactStoreOptions = {}) {
    this.dir = dir;
  }
}
