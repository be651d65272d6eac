import { isStoreError, TranscriptStoreError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { closesFence, fenceOpenLength, inlineSummaryOf, isMarkerLine, summaryOf } from "./block-headers.ts";
import type { ArtifactRef } from "./metadata.ts";

/**
 * Reveal policies for multi-agent handoff (docs/artifacts.md, Reveal policies and handoff blocks):
 * what a downstream agent sees of an artifact. `none` shows only the id, `summary` the id and its
 * summary, `full` the content.
 */
export type RevealPolicy = "none" | "summary" | "full";

/** The part of a reference a tag needs. */
export type ReferenceLike = Pick<ArtifactRef, "id"> & { summary?: string };

/** Options of `extractArtifactBlocks`. */
export interface ExtractArtifactBlocksOptions {
  /** Tool type of the stored blocks. @default "artifact" */
  toolType?: string;
}

/** What `extractArtifactBlocks` returns. */
export interface ExtractedArtifacts {
  /** The text with every block replaced by its `summary`-policy reference. */
  text: string;
  /** The stored artifacts, in the order their blocks appeared. */
  refs: ArtifactRef[];
}

/** `<artifact …/>` with double- or single-quoted attributes, any spacing, self-closed. */
const TAG = /<artifact((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/>/g;
const ATTRIBUTE = /([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function escapeAttribute(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/"/g, "&quot;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\r/g, "&#13;")
    .replace(/\n/g, "&#10;");
}

function unescapeAttribute(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|quot|apos|lt|gt);/g, (whole, entity: string) => {
    switch (entity) {
      case "amp":
        return "&";
      case "quot":
        return '"';
      case "apos":
        return "'";
      case "lt":
        return "<";
      case "gt":
        return ">";
    }
    const code = entity.startsWith("#x") ? Number.parseInt(entity.slice(2), 16) : Number.parseInt(entity.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function checkPolicy(policy: unknown): asserts policy is RevealPolicy {
  if (policy !== "none" && policy !== "summary" && policy !== "full")
    throw new TranscriptStoreError("INVALID_OPTION", `Reveal policy must be "none", "summary" or "full", got: ${String(policy)}`);
}

/**
 * Renders one reference under a policy. `full` reads the content from `store`; when the artifact
 * is gone (removed, expired) the `summary` tag is rendered instead, so a reference never turns
 * into silence.
 */
export function renderArtifactReference(ref: ReferenceLike, policy: RevealPolicy, store?: ArtifactStore): string {
  checkPolicy(policy);
  if (policy === "full") {
    if (store === undefined)
      throw new TranscriptStoreError("INVALID_OPTION", 'The "full" reveal policy needs the artifact store to read from');
    const content = store.getText(ref.id);
    if (content !== null) return content;
  }
  if (policy === "none") return `<artifact id="${escapeAttribute(ref.id)}" />`;
  return `<artifact id="${escapeAttribute(ref.id)}" summary="${escapeAttribute(ref.summary ?? "")}" />`;
}

/**
 * Rewrites every `<artifact id=… />` tag in `text` under `policy` (e.g. `full` before a final
 * answer goes to the user). Tags whose id is unknown, expired or malformed stay exactly as written.
 */
export function expandArtifactReferences(text: string, store: ArtifactStore, policy: RevealPolicy = "full"): string {
  checkPolicy(policy);
  return text.replace(TAG, (tag, attributes: string) => {
    let id: string | undefined;
    for (const m of attributes.matchAll(ATTRIBUTE)) {
      if (m[1] === "id") id = unescapeAttribute(m[2] ?? m[3] ?? "");
    }
    if (id === undefined || id.length === 0) return tag;
    let ref: ArtifactRef | null;
    try {
      ref = store.getRef(id);
    } catch (err) {
      if (isStoreError(err, "INVALID_ARTIFACT_ID")) return tag;
      throw err;
    }
    if (ref === null) return tag;
    if (policy === "full") {
      const content = store.getText(ref.id);
      return content ?? tag;
    }
    return renderArtifactReference(ref, policy);
  });
}

function stripEol(line: string): string {
  if (!line.endsWith("\n")) return line;
  return line.endsWith("\r\n") ? line.slice(0, -2) : line.slice(0, -1);
}

function isBlank(line: string): boolean {
  return stripEol(line).trim() === "";
}

/** Where a block starts at line `i`: its summary and the first line after the header, or null. */
function blockHeader(lines: string[], i: number): { summary: string; next: number } | null {
  const line = stripEol(lines[i]!);
  const inline = inlineSummaryOf(line);
  if (inline !== null) return { summary: inline, next: i + 1 };
  if (!isMarkerLine(line) || i + 1 >= lines.length) return null;
  const summary = summaryOf(stripEol(lines[i + 1]!));
  return summary !== null ? { summary, next: i + 2 } : null;
}

/** Splits after each `\n`, keeping it (the last line may have none). */
function splitLines(text: string): string[] {
  const lines: string[] = [];
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const end = nl === -1 ? text.length : nl + 1;
    lines.push(text.slice(pos, end));
    pos = end;
  }
  return lines;
}

/**
 * Stores each block an agent wrote in the handoff format and replaces it by a `summary`
 * reference:
 *
 * ```
 * ARTIFACT
 * SUMMARY: one line
 * ~~~markdown
 * content
 * ~~~
 * ```
 *
 * The fence is optional; without it the content runs to the next block or the end of the text.
 */
export function extractArtifactBlocks(text: string, store: ArtifactStore, options: ExtractArtifactBlocksOptions = {}): ExtractedArtifacts {
  const toolType = options.toolType ?? "artifact";
  const lines = splitLines(text);
  const out: string[] = [];
  const refs: ArtifactRef[] = [];
  let i = 0;
  while (i < lines.length) {
    const header = blockHeader(lines, i);
    if (header === null) {
      out.push(lines[i]!);
      i++;
      continue;
    }
    let k = header.next;
    while (k < lines.length && isBlank(lines[k]!)) k++;
    const fence = k < lines.length ? fenceOpenLength(lines[k]!) : 0;
    let body: string[];
    let end: number;
    if (fence > 0) {
      let c = k + 1;
      while (c < lines.length && !closesFence(stripEol(lines[c]!), fence)) c++;
      body = lines.slice(k + 1, c);
      end = Math.min(c + 1, lines.length);
    } else {
      let c = header.next;
      while (c < lines.length && blockHeader(lines, c) === null) c++;
      // Blank lines around the content are dropped (by index: no shifting, however many there are).
      let from = header.next;
      let to = c;
      while (from < to && isBlank(lines[from]!)) from++;
      while (to > from && isBlank(lines[to - 1]!)) to--;
      body = lines.slice(from, to);
      end = c;
    }
    const content = stripEol(body.join(""));
    const ref = store.save(content, { toolType, summary: header.summary });
    refs.push(ref);
    const lastLine = lines[end - 1] ?? "";
    out.push(renderArtifactReference(ref, "summary") + (lastLine.endsWith("\n") ? "\n" : ""));
    i = end;
  }
  return { text: out.join(""), refs };
}
