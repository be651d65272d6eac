import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { codeOf } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * Text artifacts are stored as UTF-8, which cannot hold a lone surrogate (it became U+FFFD: the
 * value read back differed from the one saved, silently). Such text is refused up front; every
 * other code unit (NUL, C0/C1 controls, bidi marks, U+FFFE/U+FFFF, non-BMP) is stored exactly.
 */
describe("artifact text: well-formed Unicode only, stored exactly", () => {
  const dirOf = () => join(tempDir("ts-art-uni-"), "s");
  const exact = "a\u0000b\u001b[31m\u009b\u202e\u200f\ufffe\uffff\ud83d\ude00\udbff\udfff\u2028z";

  it("save and spill refuse a lone surrogate (INVALID_OPTION), claim no id and write no file", () => {
    const store = new ArtifactStore(dirOf());
    for (const text of ["x\ud800y", "x\udc00", "\ud800", "ok\udbff", "\udfff\ud800"]) {
      expect(
        codeOf(() => store.save(text, { toolType: "t" })),
        JSON.stringify(text),
      ).toBe("INVALID_OPTION");
      expect(codeOf(() => store.spill(text.repeat(60_000), { toolType: "t" }))).toBe("INVALID_OPTION");
    }
    expect(store.list()).toEqual([]);
    expect(store.save("fine", { toolType: "t" }).id).toBe("0");
  });

  it("stores every other code unit exactly, through a reopen", () => {
    const dir = dirOf();
    const ref = new ArtifactStore(dir).save(exact, { toolType: "t", summary: exact });
    expect(readFileSync(ref.path).equals(Buffer.from(exact, "utf8"))).toBe(true);
    const again = new ArtifactStore(dir);
    expect(again.get(ref.id)).toBe(exact);
    expect(again.getRef(ref.id)!.summary).toBe(exact);
    // JSON values escape lone surrogates: they round-trip as values
    const json = new ArtifactStore(dir).save({ k: "\ud800", [exact]: exact }, { toolType: "j" });
    expect(new ArtifactStore(dir).get(json.id)).toEqual({ k: "\ud800", [exact]: exact });
  });

  it("saveAgentOutput refuses a lone surrogate and leaves the reserved output as it was", () => {
    const dir = dirOf();
    const store = new ArtifactStore(dir);
    const id = store.allocateAgentOutputId("rev");
    expect(codeOf(() => store.saveAgentOutput(id, "# \udc00 findings"))).toBe("INVALID_OPTION");
    expect(readFileSync(join(dir, `${id}.md`)).length).toBe(0);
    store.saveAgentOutput(id, `# ${exact}`);
    expect(new ArtifactStore(dir).getAgentOutput(id)).toBe(`# ${exact}`);
  });

  it("a streaming writer refuses a chunk holding a lone surrogate and keeps what it had", () => {
    const store = new ArtifactStore(dirOf());
    const writer = store.createWriter("bash");
    writer.write("head ");
    expect(codeOf(() => writer.write("\ud800 tail"))).toBe("INVALID_OPTION");
    writer.write(exact);
    const ref = writer.finish();
    expect(store.get(ref.id)).toBe(`head ${exact}`);
    expect(readdirSync(store.dir).filter((n) => n.endsWith(".log"))).toHaveLength(1);
  });
});
