import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { expandArtifactReferences, extractArtifactBlocks, renderArtifactReference } from "../../src/artifacts/reveal.ts";
import { tempDir } from "../support/temp-dir.ts";

function newStore() {
  return new ArtifactStore(join(tempDir("ts-art-"), "s"), { now: () => 0 });
}

describe("reveal policies (acceptance 7)", () => {
  it("renders the three reveal policies (docs/artifacts.md)", () => {
    const store = newStore();
    for (let i = 0; i < 3; i++) store.save(`filler ${i}`, { toolType: "t" });
    const ref = store.save("# Dark mode\n\nFull draft.", { toolType: "draft", summary: 'Add "dark" mode & <themes>' });
    expect(ref.id).toBe("3");
    expect(renderArtifactReference(ref, "none")).toBe('<artifact id="3" />');
    expect(renderArtifactReference(ref, "summary")).toBe('<artifact id="3" summary="Add &quot;dark&quot; mode &amp; &lt;themes&gt;" />');
    expect(renderArtifactReference(ref, "full", store)).toBe("# Dark mode\n\nFull draft.");
    expect(() => renderArtifactReference(ref, "full")).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(() => renderArtifactReference(ref, "all" as "full", store)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("expandArtifactReferences replaces every tag form and leaves unknown ids as they were", () => {
    const store = newStore();
    store.save("ZERO", { toolType: "t", summary: "zero" });
    store.save("ONE", { toolType: "t", summary: "one", name: "draft_k3x9" });
    const text = [
      'a <artifact id="0" /> b',
      "c <artifact   id='1'   summary='one'/> d",
      'e <artifact id="0" summary="stale summary" /> f',
      'g <artifact summary="x" id="1"/> h',
      'i <artifact id="draft_k3x9" /> j',
      'unknown <artifact id="99" summary="gone" /> and <artifact id=\'nope\'/> and <artifact id="artifact://../x" />',
      "not a tag: <artifact> <artifact id=0 />",
    ].join("\n");
    expect(expandArtifactReferences(text, store, "full")).toBe(
      [
        "a ZERO b",
        "c ONE d",
        "e ZERO f",
        "g ONE h",
        "i ONE j",
        'unknown <artifact id="99" summary="gone" /> and <artifact id=\'nope\'/> and <artifact id="artifact://../x" />',
        "not a tag: <artifact> <artifact id=0 />",
      ].join("\n"),
    );
    expect(expandArtifactReferences('x <artifact id="0" summary="stale summary" /> <artifact id="1"/>', store, "summary")).toBe(
      'x <artifact id="0" summary="zero" /> <artifact id="1" summary="one" />',
    );
    expect(expandArtifactReferences('x <artifact id="0" summary="zero" /> <artifact id="99" />', store, "none")).toBe(
      'x <artifact id="0" /> <artifact id="99" />',
    );
  });

  it("extractArtifactBlocks turns a reply with two ARTIFACT/SUMMARY blocks into two artifacts and two references", () => {
    const store = newStore();
    const reply = [
      "Here is the draft.",
      "ARTIFACT",
      "SUMMARY: Add dark mode theme",
      "~~~markdown",
      "[Feature]: Dark mode",
      "",
      "~~~ not a closing fence",
      "Body line.",
      "~~~",
      "And the schema:",
      "ARTIFACT",
      "SUMMARY: Settings schema",
      '{ "theme": "dark" }',
      "",
      "",
    ].join("\n");
    const { text, refs } = extractArtifactBlocks(reply, store);
    expect(refs.map((r) => [r.id, r.summary, r.toolType])).toEqual([
      ["0", "Add dark mode theme", "artifact"],
      ["1", "Settings schema", "artifact"],
    ]);
    expect(store.get("0")).toBe("[Feature]: Dark mode\n\n~~~ not a closing fence\nBody line.");
    expect(store.get("1")).toBe('{ "theme": "dark" }');
    expect(text).toBe(
      'Here is the draft.\n<artifact id="0" summary="Add dark mode theme" />\nAnd the schema:\n<artifact id="1" summary="Settings s' +
        'chema" />\n',
    );
    // and the reference expands back to the content under the "full" policy
    expect(expandArtifactReferences(text, store, "full")).toBe(
      'Here is the draft.\n[Feature]: Dark mode\n\n~~~ not a closing fence\nBody line.\nAnd the schema:\n{ "theme": "dark" }\n',
    );
  });

  it("leaves text without blocks untouched and stores nothing", () => {
    const store = newStore();
    const text = "ARTIFACT alone is not a block\nSUMMARY: neither is this\n";
    expect(extractArtifactBlocks(text, store)).toEqual({ text, refs: [] });
    expect(store.list()).toEqual([]);
  });
});
