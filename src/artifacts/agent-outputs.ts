import { join } from "node:path";
import { TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { io, writeFileAtomic } from "../io.ts";
import { createExclusive } from "../io-exclusive.ts";
import { listEntries, openGuarded, readGuarded } from "./artifact-files.ts";
import { assertWellFormedText, bytesToText } from "./artifact-values.ts";
import { pageFile } from "./file-pages.ts";
import { pageLines, type LinePage, type LinePageOptions } from "./line-pages.ts";
import type { ArtifactCipher } from "./artifact-cipher.ts";
import { AGENT_OUTPUT_FILE, agentOutputFileName, assertAgentOutputId, MAX_AGENT_OUTPUT_ID, sanitizeAgentName } from "./artifact-names.ts";

/** Options of `allocateAgentOutputId`. */
export interface AllocateAgentOutputOptions {
  /** Id of the parent agent's output: the new id becomes `<parentPrefix>.<name>`. */
  parentPrefix?: string;
}

/** What `saveAgentOutput` returns. */
export interface AgentOutputRef {
  id: string;
  /** `agent://<id>`. */
  uri: string;
  path: string;
  sizeBytes: number;
}

/** The parts of the store agent outputs need. */
interface AgentOutputHost {
  readonly dir: string;
  readonly fsync: boolean;
  prepareDir(): void;
  warn(warning: StoreWarning): void;
  /** An encrypted session's cipher: outputs are written sealed and read back through it. */
  readonly cipher: ArtifactCipher | null;
  sealed(name: string, plain: Uint8Array): Uint8Array;
}

/**
 * Subagent outputs, `<id>.md` in the artifacts directory (`agent://<id>`). Ids are readable
 * (`reviewer`, `reviewer-2`, `planner.reviewer`) and claimed with an exclusive create of the
 * empty `.md` file, so two processes never get the same id and a resumed session continues after
 * the outputs already on disk.
 */
export class AgentOutputs {
  private readonly host: AgentOutputHost;
  /** Highest suffix seen per stem (1 for the bare stem): one listing, then kept up to date. */
  private suffixes: Map<string, number> | null = null;

  constructor(host: AgentOutputHost) {
    this.host = host;
  }

  /** Reserves `name`, else `name-2`, `name-3`… (one past the highest on disk), under `parentPrefix.` when given. */
  allocate(name: string, options: AllocateAgentOutputOptions = {}): string {
    const base = sanitizeAgentName(name);
    const prefix = options.parentPrefix === undefined ? undefined : assertAgentOutputId(options.parentPrefix);
    const stem = prefix === undefined ? base : `${prefix}.${base}`;
    if (stem.length > MAX_AGENT_OUTPUT_ID)
      throw new TranscriptStoreError(
        "INVALID_ARTIFACT_ID",
        `Agent output id would exceed ${MAX_AGENT_OUTPUT_ID} characters (parentPrefix too deep)`,
      );
    this.host.prepareDir();
    const suffixes = this.knownSuffixes();
    let n = (suffixes.get(stem) ?? 0) + 1;
    for (;;) {
      const id = n === 1 ? stem : `${stem}-${n}`;
      let claimed: boolean;
      try {
        claimed = createExclusive(join(this.host.dir, agentOutputFileName(id)));
      } catch (err) {
        throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not reserve agent output ${id}: ${(err as Error).message}`, {
          path: join(this.host.dir, agentOutputFileName(id)),
          cause: err,
        });
      }
      // Taken or not, the name now exists: another process's claims are learned by stepping over them.
      noteName(suffixes, id);
      if (claimed) return id;
      n++;
    }
  }

  /** Writes the markdown to a temp file and renames it to `<id>.md` (text with a lone surrogate is refused: `INVALID_OPTION`). */
  save(id: string, markdown: string): AgentOutputRef {
    assertAgentOutputId(id);
    if (typeof markdown !== "string") throw new TranscriptStoreError("INVALID_OPTION", "Agent output must be a markdown string");
    assertWellFormedText(markdown, `Agent output ${id}`);
    this.host.prepareDir();
    const bytes = Buffer.from(markdown, "utf8");
    const path = join(this.host.dir, agentOutputFileName(id));
    try {
      writeFileAtomic(path, this.host.sealed(agentOutputFileName(id), bytes), { fsync: this.host.fsync });
    } catch (err) {
      throw new TranscriptStoreError("PERSISTENCE_FAILED", `Could not save agent output ${id}: ${(err as Error).message}`, {
        path,
        cause: err,
      });
    }
    return { id, uri: `agent://${id}`, path, sizeBytes: bytes.length };
  }

  /** The markdown of an output, or null when absent (a symlink in its place reads as absent). */
  read(id: string): string | null {
    assertAgentOutputId(id);
    const path = join(this.host.dir, agentOutputFileName(id));
    const bytes = readGuarded(path);
    if (bytes === "unsafe") return this.unsafe(path);
    if (bytes === null) return null;
    const cipher = this.host.cipher;
    return bytesToText(cipher === null ? bytes : cipher.open(agentOutputFileName(id), bytes, path), id);
  }

  /** A page of an output's lines, read in chunks (memory bounded by the page); null when absent. */
  readPage(id: string, options: LinePageOptions): LinePage | null {
    assertAgentOutputId(id);
    if (this.host.cipher !== null) {
      // Sealed: decrypted whole (authenticated) before a page of it is served.
      const markdown = this.read(id);
      return markdown === null ? null : pageLines(markdown, options);
    }
    const path = join(this.host.dir, agentOutputFileName(id));
    const fd = openGuarded(path);
    if (fd === "unsafe") return this.unsafe(path);
    if (fd === null) return null;
    try {
      return pageFile(fd, options);
    } finally {
      io.closeSync(fd);
    }
  }

  private unsafe(path: string): null {
    this.host.warn({ code: "ARTIFACT_NOT_FOUND", message: "Agent output is not a regular file; ignored", path });
    return null;
  }

  /** Ids of the outputs on disk, sorted. */
  list(): string[] {
    const ids: string[] = [];
    for (const entry of listEntries(this.host.dir)) {
      const m = AGENT_OUTPUT_FILE.exec(entry.name);
      if (m && entry.isFile()) ids.push(m[1]!);
    }
    return ids.sort();
  }

  /** One listing of the directory per store; afterwards every claim keeps the map current. */
  private knownSuffixes(): Map<string, number> {
    if (this.suffixes === null) {
      this.suffixes = new Map();
      for (const entry of listEntries(this.host.dir)) {
        const m = AGENT_OUTPUT_FILE.exec(entry.name);
        if (m) noteName(this.suffixes, m[1]!);
      }
    }
    return this.suffixes;
  }
}

/** Records an output id under both readings: itself as a bare stem, and `stem-N` (N ≥ 2) as suffix N of `stem`. */
function noteName(suffixes: Map<string, number>, id: string): void {
  if ((suffixes.get(id) ?? 0) < 1) suffixes.set(id, 1);
  const m = /-(\d{1,9})$/.exec(id);
  if (m === null || Number(m[1]) < 2) return;
  const stem = id.slice(0, id.length - m[0].length);
  if ((suffixes.get(stem) ?? 0) < Number(m[1])) suffixes.set(stem, Number(m[1]));
}
