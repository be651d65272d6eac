// Everything a reopened artifacts directory must still answer, as plain JSON: the parent test
// takes it before discarding its store, a child process takes it again from the same directory.
import type { ArtifactStore } from "../../../src/artifacts/artifact-store.ts";
import { resolveInternalUrl } from "../../../src/artifacts/internal-urls.ts";
import { expandArtifactReferences } from "../../../src/artifacts/reveal.ts";

export interface SnapshotKeys {
  ids: string[];
  names: string[];
  pointers: string[];
  agentUrls: string[];
  text: string;
}

function attempt<T>(fn: () => T): T | { error: string } {
  try {
    return fn();
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  }
}

/** Reads every way the artifacts can be read; Buffers become hex so the result is JSON. */
export function snapshot(store: ArtifactStore, keys: SnapshotKeys): unknown {
  const plain = (v: unknown) => (Buffer.isBuffer(v) ? { hex: v.toString("hex") } : v);
  const session = { artifacts: store };
  return {
    list: store.list().map(({ path, ...ref }) => ({ ...ref, file: path.slice(store.dir.length) })),
    stats: store.stats(),
    byId: keys.ids.map((id) => plain(store.get(id))),
    byName: keys.names.map((name) => plain(store.get(name))),
    byPointer: keys.pointers.map((p) => plain(store.get(p))),
    pages: keys.ids.map((id) => store.read(id, { offset: 2, limit: 2 })),
    artifactUrls: keys.ids.map((id) => attempt(() => resolveInternalUrl(`artifact://${id}`, { session }))),
    agentOutputs: store.listAgentOutputs().map((id) => [id, store.getAgentOutput(id)]),
    agentUrls: keys.agentUrls.map((url) => attempt(() => resolveInternalUrl(url, { session }))),
    expanded: expandArtifactReferences(keys.text, store, "full"),
    summarized: expandArtifactReferences(keys.text, store, "summary"),
  };
}
