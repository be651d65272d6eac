import { TranscriptStoreError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { assertAgentOutputId, parseArtifactId } from "./artifact-names.ts";
import { extractJson, parseJsonQuery, type JsonStep } from "./json-query.ts";
import { validatePageOptions, type LinePage, type LinePageOptions } from "./line-pages.ts";

/** The caller's session: anything with an `artifacts` store (a SessionManager qualifies). */
export interface InternalUrlSession {
  readonly artifacts: ArtifactStore | null;
}

/** The caller's session plus line pagination for plain (non-extraction) reads. */
export interface ResolveInternalUrlOptions extends LinePageOptions {
  /** Only this session's artifacts directory is ever consulted; null or absent is `NO_SESSION`. */
  session: InternalUrlSession | null | undefined;
}

/** What an internal URL resolves to. */
export interface ResolvedInternalUrl {
  url: string;
  scheme: "artifact" | "agent";
  /** The artifact id or agent output id. */
  id: string;
  /** The text (or the page of it), or the extracted JSON, pretty-printed. */
  content: string;
  contentType: string;
  /** Line pagination details for plain reads; absent for JSON extraction. */
  page?: Omit<LinePage, "content">;
}

const ARTIFACT_SCHEME = "artifact://";
const AGENT_SCHEME = "agent://";
const NO_SESSION_MESSAGE = "No session - artifacts unavailable";

/**
 * Resolves `artifact://<id>`, `agent://<id>`, `agent://<id>/<json/path>` and
 * `agent://<id>?q=<query>` against the caller's session only (docs/artifacts.md, Internal URLs).
 * The URL is parsed by hand, not with `new URL`, because WHATWG parsing would quietly normalize
 * `..` segments away instead of letting them be refused.
 */
export function resolveInternalUrl(url: string, options: ResolveInternalUrlOptions): ResolvedInternalUrl {
  if (typeof url !== "string") throw new TranscriptStoreError("INVALID_ARTIFACT_ID", "Internal URL must be a string");
  const store = options?.session?.artifacts ?? null;
  if (url.startsWith(ARTIFACT_SCHEME)) {
    if (store === null) throw new TranscriptStoreError("NO_SESSION", NO_SESSION_MESSAGE);
    return resolveArtifact(url, store, options);
  }
  if (url.startsWith(AGENT_SCHEME)) {
    if (store === null) throw new TranscriptStoreError("NO_SESSION", NO_SESSION_MESSAGE);
    return resolveAgent(url, store, options);
  }
  throw new TranscriptStoreError(
    "INVALID_ARTIFACT_ID",
    `Unsupported internal URL (expected artifact:// or agent://): ${url.slice(0, 200)}`,
  );
}

function resolveArtifact(url: string, store: ArtifactStore, options: LinePageOptions): ResolvedInternalUrl {
  const id = parseArtifactId(url.slice(ARTIFACT_SCHEME.length));
  validatePageOptions(options);
  const ref = store.getRef(id);
  // Read as a page straight from the file: memory follows the page asked for, not the artifact.
  const page = ref === null ? null : store.read(id, { offset: options.offset, limit: options.limit });
  if (ref === null || page === null) {
    const ids = store.list().map((r) => r.id);
    throw new TranscriptStoreError(
      "ARTIFACT_NOT_FOUND",
      `Artifact ${id} not found. Available: ${ids.length > 0 ? ids.join(", ") : "none"}`,
      { path: store.dir },
    );
  }
  const { content, ...rest } = page;
  return { url, scheme: "artifact", id, content, contentType: ref.contentType, page: rest };
}

function resolveAgent(url: string, store: ArtifactStore, options: LinePageOptions): ResolvedInternalUrl {
  const rest = url.slice(AGENT_SCHEME.length);
  const queryAt = rest.indexOf("?");
  const target = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const query = queryAt === -1 ? null : queryParam(rest.slice(queryAt + 1), "q", url);
  // Split before decoding: an encoded `%2F` must stay inside its segment, never become a separator.
  const segments = target.split("/").map((s) => decodeSegment(s, url));
  const id = segments[0]!;
  try {
    assertAgentOutputId(id);
  } catch {
    throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `agent:// ID must be an agent output id, got: ${id.slice(0, 200)}`);
  }
  const path = segments.slice(1);
  if (path.length > 0 && path[path.length - 1] === "") path.pop();
  if (path.some((s) => s.length === 0)) throw new TranscriptStoreError("INVALID_QUERY", `Empty path segment in ${url}`);
  if (path.length > 0 && query !== null)
    throw new TranscriptStoreError("INVALID_QUERY", "agent:// URL cannot combine path extraction with ?q=");
  const extracting = path.length > 0 || query !== null;
  if (extracting && (options.offset !== undefined || options.limit !== undefined)) {
    throw new TranscriptStoreError("INVALID_OPTION", "offset/limit cannot be combined with agent:// JSON extraction");
  }
  const steps: JsonStep[] | null = query !== null ? parseJsonQuery(query) : path.length > 0 ? path : null;
  validatePageOptions(options);
  const notFound = () => {
    const ids = store.listAgentOutputs();
    return new TranscriptStoreError(
      "ARTIFACT_NOT_FOUND",
      `Agent output ${id} not found. Available: ${ids.length > 0 ? ids.join(", ") : "none"}`,
      { path: store.dir },
    );
  };
  if (steps === null) {
    // A plain read is a page streamed from the file, like artifact://.
    const page = store.readAgentOutput(id, { offset: options.offset, limit: options.limit });
    if (page === null) throw notFound();
    const { content, ...rest } = page;
    return { url, scheme: "agent", id, content, contentType: "text/markdown", page: rest };
  }
  const markdown = store.getAgentOutput(id);
  if (markdown === null) throw notFound();
  let parsed: unknown;
  try {
    parsed = JSON.parse(markdown);
  } catch (err) {
    throw new TranscriptStoreError("INVALID_QUERY", `Output ${id} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const value = extractJson(parsed, steps, url);
  return { url, scheme: "agent", id, content: JSON.stringify(value, null, 2) ?? "null", contentType: "application/json" };
}

/**
 * The first `name=value` of a query string, decoded as a URI component: `%2B` and a literal `+`
 * both stay `+` (form decoding, as `URLSearchParams` does, would turn `+` into a space and make
 * `["a+b"]` read the key `"a b"`). Null when the parameter is absent.
 */
function queryParam(query: string, name: string, url: string): string | null {
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    if (decodeOrNull(eq === -1 ? pair : pair.slice(0, eq)) !== name) continue;
    const value = eq === -1 ? "" : decodeOrNull(pair.slice(eq + 1));
    if (value === null) throw new TranscriptStoreError("INVALID_QUERY", `Malformed percent-encoding in the query of ${url.slice(0, 200)}`);
    return value;
  }
  return null;
}

function decodeOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

function decodeSegment(segment: string, url: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new TranscriptStoreError("INVALID_ARTIFACT_ID", `Malformed percent-encoding in ${url.slice(0, 200)}`);
  }
}
