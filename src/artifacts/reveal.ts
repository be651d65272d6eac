import { isStoreError, TranscriptStoreError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import type { ArtifactRef } from "./metadata.ts";

/**
 * Reveal policies for multi-agent handoff (SPEC §8): what a downstream agent sees of an
 * artifact. `none` shows only the id, `summary` the id and its summary, `full` the content.
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
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#13;").replace(/\n/g, "&#10;");
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
  if (policy !== "none" && policy !== "summary" && policy !== "full") throw new TranscriptStoreError("INVALID_OPTION", `Reveal policy must be "none", "summary" or "full", got: ${String(policy)}`);
}

/**
 * Renders one reference under a policy. `full` reads the content from `store`; when the artifact
 * is gone (removed, expired) the `summary` tag is rendered instead, so a reference never turns
 * into silence.
 */
export function renderArtifactReference(ref: ReferenceLike, policy: RevealPolicy, store?: ArtifactStore): string {
  checkPolicy(policy);
  if (policy === "full") {
    if (store === undefined) throw new TranscriptStoreError("INVALID_OPTION", 'The "full" reveal policy needs the artifact store to read from');
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

const MARKER = /^\s*ARTIFACT\s*$/;
const INLINE_MARKER = /^\s*ARTIFACT\s+SUMMARY:[ \t]*(.*?)\s*$/;
const SUMMARY_LINE = /^\s*SUMMARY:[ \t]*(.*?)\s*$/;
const FENCE_OPEN = /^\s*(~{3,})/;

function stripEol(line: string): string {
  return line.replace(/\r?\n$/, "");
}

/** Where a block starts at line `i`: its summary and the first line after the header, or null. */
function blockHeader(lines: string[], i: number): { summary: string; next: number } | null {
  const line = stripEol(lines[i]!);
  const inline = INLINE_MARKER.exec(line);
  if (inline) return { summary: inline[1]!, next: i + 1 };
  if (!MARKER.test(line) || i + 1 >= lines.length) return null;
  const summary = SUMMARY_LINE.exec(stripEol(lines[i + 1]!));
  return summary ? { summary: summary[1]!, next: i + 2 } : null;
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
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
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
    while (k < lines.length && stripEol(lines[k]!).trim() === "") k++;
    const fence = k < lines.length ? FENCE_OPEN.exec(lines[k]!) : null;
    let body: string[];
    let end: number;
    if (fence) {
      const close = new RegExp(`^\\s*~{${fence[1]!.length},}\\s*$`);
      let c = k + 1;
      while (c < lines.length && !close.test(stripEol(lines[c]!))) c++;
      body = lines.slice(k + 1, c);
      end = Math.min(c + 1, lines.length);
    } else {
      let c = header.next;
      while (c < lines.length && blockHeader(lines, c) === null) c++;
      body = lines.slice(header.next, c);
      while (body.length > 0 && stripEol(body[0]!).trim() === "") body.shift();
      while (body.length > 0 && stripEol(body[body.length - 1]!).trim() === "") body.pop();
      end = c;
    }
    const content = body.join("").replace(/\r?\n$/, "");
    const ref = store.save(content, { toolType, summary: header.summary });
    refs.push(ref);
    const lastLine = lines[end - 1] ?? "";
    out.push(renderArtifactReference(ref, "summary") + (lastLine.endsWith("\n") ? "\n" : ""));
    i = end;
  }
  return { text: out.join(""), refs };
}
