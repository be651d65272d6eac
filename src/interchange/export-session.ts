import { describeCounts, type RedactionCounts } from "../prepare/redact-secrets.ts";
import { redactForSharing, type SharingRedactionOptions } from "../session/redact-for-sharing.ts";
import { TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions, type SessionManagerOptions } from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import { sharingRedactorOf } from "../storage/sharing-key.ts";
import { atifChunks, type AtifOptions } from "./atif.ts";
import { htmlChunks } from "./html.ts";
import { markdownChunks } from "./markdown.ts";
import { DEFAULT_ARTIFACT_EMBED_BYTES, type SourceArtifact, type TranscriptSource } from "./transcript-source.ts";

/** The formats `exportSession` writes (the CLI's `export --to` names). */
export type ViewFormat = "atif" | "markdown" | "html";

/** `export --to <format>` of the readable and interchange views: one renderer per format. */
export const VIEW_RENDERERS: Record<ViewFormat, (source: TranscriptSource, options: AtifOptions) => Iterable<string>> = {
  atif: atifChunks,
  markdown: markdownChunks,
  html: htmlChunks,
};

export interface ExportSessionOptions extends SessionManagerOptions, AtifOptions {
  format: ViewFormat;
  /** The entry whose branch (root → it) is exported; HTML shows it first. Default: the session's leaf. */
  branch?: string;
  /**
   * Text of each artifact embedded at most (HTML, Markdown), in bytes.
   * @default 65536
   */
  artifactEmbedBytes?: number;
  /**
   * Shared output is redacted (README, Privacy): every secret in the header, the entries and the
   * embedded artifact text becomes a marker (`redactForSharing`, the store's key). `false` keeps
   * the text as stored; an object names other rules or a key. @default true
   */
  redactOutput?: boolean | SharingRedactionOptions;
}

/** The artifacts of an open session, each text one read up to `limit` bytes. */
export function artifactsOf(m: SessionManager, limit: number): SourceArtifact[] {
  const store = m.artifacts;
  if (store === null) return [];
  return store.list().map((ref) => {
    const textual = /^(text\/|application\/(json|x-ndjson|xml))/.test(ref.contentType);
    let text: string | null = null;
    if (textual) {
      const whole = store.getText(ref.id);
      if (whole !== null) {
        const bytes = Buffer.from(whole, "utf8");
        // Cut at a character boundary: a partial UTF-8 sequence at the end is dropped by the decoder's replacement.
        text = bytes.length > limit ? new TextDecoder().decode(bytes.subarray(0, limit)).replace(/\uFFFD$/, "") : whole;
      }
    }
    return {
      id: ref.id,
      uri: ref.uri,
      name: ref.name ?? null,
      toolType: ref.toolType,
      summary: ref.summary,
      contentType: ref.contentType,
      sizeBytes: ref.sizeBytes,
      text,
      cut: text !== null && ref.sizeBytes > Buffer.byteLength(text, "utf8"),
    };
  });
}

/**
 * A session (its id, or a session file's path) as ATIF, Markdown or self-contained HTML, in
 * pieces of text (write them in order; nothing is one string). The session is opened read-only;
 * images are read back from the blob store as each entry is rendered. An unknown `branch` entry
 * is `ENTRY_NOT_FOUND`, before anything is yielded.
 */
export async function* exportSession(idOrPath: string, options: ExportSessionOptions): AsyncGenerator<string> {
  // An own property only: a format named "toString" is no renderer.
  const render = Object.hasOwn(VIEW_RENDERERS, options.format) ? VIEW_RENDERERS[options.format] : undefined;
  if (render === undefined)
    throw new TranscriptStoreError("INVALID_OPTION", `format must be one of ${Object.keys(VIEW_RENDERERS).join(", ")}`);
  const { format: _format, branch, agent, artifactEmbedBytes, redactOutput: redact, ...storeOptions } = options;
  const resolved = resolveSessionManagerOptions({ ...storeOptions, onWarning: storeOptions.onWarning ?? (() => {}) });
  const ref =
    (await backendOf(resolved).locate(idOrPath, resolved)) ??
    (io.statSync(idOrPath, { throwIfNoEntry: false })?.isFile() === true
      ? idOrPath
      : (await SessionManager.resolve(idOrPath, process.cwd(), storeOptions)).path);
  const m = await SessionManager.open(ref, { ...storeOptions, readOnly: true, rehydrate: "lazy" });
  try {
    if (branch !== undefined && m.getEntry(branch) === undefined)
      throw new TranscriptStoreError("ENTRY_NOT_FOUND", `No entry ${branch} in session ${m.sessionId}`);
    const redactor = await sharingRedactorOf(resolved.store, storeOptions.root, redact);
    const counts: RedactionCounts = new Map();
    const share = <T>(value: T): T => (redactor === null ? value : redactForSharing(value, redactor, counts));
    const source: TranscriptSource = {
      header: share(m.header),
      entries: m.getEntries().map(share),
      leafId: branch ?? m.getLeafId(),
      rehydrate: (value) => m.rehydrate(value),
      // Every field of an artifact a view prints (its name, summary and tool type too), not its text alone.
      artifacts: artifactsOf(m, artifactEmbedBytes ?? DEFAULT_ARTIFACT_EMBED_BYTES).map(share),
    };
    if (counts.size > 0)
      resolved.onWarning({ code: "SECRET_REDACTED", message: `export ${m.sessionId}: redacted ${describeCounts(counts)}` });
    yield* render(source, agent === undefined ? {} : { agent });
  } finally {
    await m.close();
  }
}
