import { join } from "node:path";
import type { WarningHandler } from "../errors.ts";
import type { PrepareOptions } from "../prepare/pipeline.ts";
import type { RedactOption } from "../prepare/redact-secrets.ts";
import { resolveSessionManagerOptions, type ResolvedSessionManagerOptions } from "../session/session-options.ts";
import { defaultAgentDir } from "./file-entries.ts";

/**
 * Engine settings of the pi facade, all optional (pi's own signatures take none): an extra last
 * argument of every factory, so a pi call site works unchanged.
 */
export interface PiStoreOptions extends PrepareOptions {
  /** Where images go. @default the engine's default blob dir ($TRANSCRIPT_STORE_HOME/blobs or ~/.transcript-store/blobs) */
  blobsDir?: string;
  /** pi's agent directory (sessions are under `<agentDir>/sessions`). @default $PI_CODING_AGENT_DIR, else ~/.pi/agent */
  agentDir?: string;
  /** Data-sync every append and fsync rewrites and blobs. @default false */
  fsync?: boolean;
  /** Receives non-fatal problems (malformed lines kept, torn tail repaired, lock lost, …). @default ignore */
  onWarning?: WarningHandler;
  /** Age after which a dead writer's lock is taken over (min 2000). @default 10000 */
  lockStaleMs?: number;
  /** Bytes per read while scanning. @default 1 MiB */
  chunkSize?: number;
  /**
   * Redact secrets before they reach disk (see SessionManagerOptions.redact); the key is kept beside
   * the engine's blobs ($TRANSCRIPT_STORE_HOME or ~/.transcript-store). @default off
   */
  redact?: RedactOption;
}

export interface ResolvedPiOptions {
  engine: ResolvedSessionManagerOptions;
  agentDir: string;
  /** `<agentDir>/sessions`: the root that the blob store's registry of referrers records. */
  sessionsRoot: string;
}

/** Validates (INVALID_OPTION) and applies defaults, through the engine's own option resolver. */
export function resolvePiOptions(options: PiStoreOptions = {}): ResolvedPiOptions {
  const agentDir = options.agentDir ?? defaultAgentDir();
  const { agentDir: _a, ...rest } = options;
  const sessionsRoot = join(agentDir, "sessions");
  const engine = resolveSessionManagerOptions({ ...rest, sessionsDir: sessionsRoot, layout: "pi", rehydrate: "eager" });
  return { engine, agentDir, sessionsRoot };
}
