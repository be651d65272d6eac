import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blobRefsIn, parseBlobRef } from "../../src/blob/blob-ref.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { openSessionView, skeletonsServed } from "../../src/viewer/session-data.ts";
import { branchPageHtml, leavesOf, sessionHtml, shownBranch } from "../../src/viewer/session-view.ts";
import { ViewerStore } from "../../src/viewer/viewer-store.ts";
import { sharedData } from "../support/shared-data.ts";
import { viewerStore } from "./viewer-fixtures.ts";

/** The page of every branch of a session, as the skeleton serves it and as the whole session opened does. */
async function bothWays(store: ViewerStore, id: string) {
  const info = (await store.listing()).find((s) => s.id === id)!;
  const pages = async (whole: boolean) => {
    const before = { ...skeletonsServed };
    const v = await openSessionView(store, info, { redact: false, whole });
    try {
      const out = leavesOf(v.nodes).map((leaf) => sessionHtml(v, leaf.id, [], ""));
      const { branch } = shownBranch(v, null);
      out.push(branchPageHtml(v, branch, 1).html, JSON.stringify(v.usage()), JSON.stringify(v.artifacts()));
      return { out, skeleton: skeletonsServed.skeleton > before.skeleton };
    } finally {
      await v.close();
    }
  };
  return { skeleton: await pages(false), whole: await pages(true) };
}

describe("serve: a page from the skeleton equals the page from the session opened whole", () => {
  it("for the views session (branches, blob image, compaction, artifact) and the hostile one", async () => {
    const s = await viewerStore();
    const store = new ViewerStore({ root: s.root });
    for (const id of [s.m.sessionId, s.hostile.id]) {
      const { skeleton, whole } = await bothWays(store, id);
      expect(skeleton.skeleton, id).toBe(true);
      expect(whole.skeleton).toBe(false);
      expect(skeleton.out).toEqual(whole.out);
    }
  });

  it("for real pi transcripts migrated into the store", async () => {
    const s = await viewerStore();
    for (const name of ["pi-v1-large-session.jsonl", "pi-v1-before-compaction.jsonl"]) {
      const source = sharedData(join("real-sessions", name));
      if (source === null) continue;
      const m = await SessionManager.open(source, { root: s.root, readOnly: true });
      const copy = await SessionManager.forkFrom(source, "/work/real", { root: s.root });
      await copy.close();
      await m.close();
      const { skeleton, whole } = await bothWays(new ViewerStore({ root: s.root }), copy.sessionId);
      expect(skeleton.skeleton).toBe(true);
      expect(skeleton.out).toEqual(whole.out);
    }
  });

  it("opens whole what a skeleton cannot read as a load does: a damaged line, a repeated id, an older version", async () => {
    const s = await viewerStore();
    const store = new ViewerStore({ root: s.root });
    const text = readFileSync(s.hostile.path, "utf8");
    const lines = text.split("\n");
    const variants = {
      damaged: `${lines.slice(0, 2).join("\n")}\n{"type":"message","id":"torn\n${lines.slice(2).join("\n")}`,
      repeated: `${text}${lines[1]}\n`,
      older: text.replace('"version":3', '"version":2'),
    };
    for (const [name, body] of Object.entries(variants)) {
      writeFileSync(s.hostile.path, body);
      const { skeleton, whole } = await bothWays(store, s.hostile.id);
      expect(skeleton.skeleton, name).toBe(false);
      expect(skeleton.out, name).toEqual(whole.out);
    }
  });

  it("never serves a damaged blob: a truncated image blob is a 404, not wrong bytes", async () => {
    const s = await viewerStore();
    const store = new ViewerStore({ root: s.root });
    const info = (await store.listing()).find((x) => x.id === s.m.sessionId)!;
    const ref = blobRefsIn(readFileSync(s.m.sessionFile!, "utf8"))[0]!;
    const entry = readFileSync(s.m.sessionFile!, "utf8")
      .split("\n")
      .find((l) => l.includes(ref))!;
    const entryId = (JSON.parse(entry) as { id: string }).id;
    const v = await openSessionView(store, info, { redact: false });
    const good = await v.image(entryId, 1);
    expect(good?.type).toBe("image/png");
    truncateSync(join(s.root, "blobs", parseBlobRef(ref)), 10);
    expect(await v.image(entryId, 1)).toBeNull();
    await v.close();
  });
});
