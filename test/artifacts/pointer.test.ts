import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { artifactTools } from "../../src/artifacts/artifact-tools.ts";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { approxByteSize, isPointer, toModelHint, type ArtifactPointer } from "../../src/artifacts/pointer.ts";
import { tempDir } from "../support/temp-dir.ts";
import { codeOf } from "../support/error-code.ts";

function newStore() {
  return new ArtifactStore(join(tempDir("ts-art-"), "s"), { now: () => 42 });
}

describe("spill (acceptance 5)", () => {
  it("returns a value below the threshold by identity and stores nothing", () => {
    const store = newStore();
    const obj = { rows: ["x".repeat(100)] };
    expect(store.spill(obj, { toolType: "sql" })).toBe(obj);
    const text = "é".repeat(25_599); // 51,198 UTF-8 bytes
    expect(store.spill(text, { toolType: "bash" })).toBe(text);
    expect(existsSync(store.dir)).toBe(false);
  });

  it("measures UTF-8 bytes: exactly at the threshold spills", () => {
    const store = newStore();
    const text = "é".repeat(25_600); // 51,200 bytes, 25,600 characters
    const result = store.spill(text, { toolType: "bash" }) as ArtifactPointer;
    expect(result.sizeBytes).toBe(51_200);
    expect(result.pointer).toBe("artifact://0");
    expect(store.get(result.pointer)).toBe(text);
  });

  it("above the threshold returns an envelope whose preview, size and pointer are right; get gives the original back", () => {
    const store = newStore();
    const big = { rows: Array.from({ length: 3000 }, (_, i) => ({ i, line: `row ${i} ✓` })) };
    const serialized = JSON.stringify(big);
    const result = store.spill(big, { toolType: "sql", previewChars: 50 });
    expect(isPointer(result)).toBe(true);
    const envelope = result as ArtifactPointer;
    expect(envelope.pointer).toBe("artifact://0");
    expect(envelope.preview).toBe(serialized.slice(0, 50));
    expect(envelope.sizeBytes).toBe(Buffer.byteLength(serialized, "utf8"));
    expect(envelope.note).toContain("artifact://0");
    expect(Object.keys(envelope).sort()).toEqual(["note", "pointer", "preview", "sizeBytes"]);
    const back = store.get(envelope.pointer);
    expect(back).toEqual(big);
    expect(back).not.toBe(big);
    expect(store.getRef("0")).toMatchObject({ toolType: "sql", sizeBytes: envelope.sizeBytes, contentType: "application/json" });
  });

  it("uses the default 200-character preview and honours maxInlineBytes", () => {
    const store = newStore();
    const text = `${"😀".repeat(150)}tail`;
    expect(store.spill(text, { toolType: "t", maxInlineBytes: 1_000 })).toBe(text);
    const envelope = store.spill(text, { toolType: "t", maxInlineBytes: 100 }) as ArtifactPointer;
    expect(envelope.preview).toBe("😀".repeat(100));
    expect(envelope.sizeBytes).toBe(604);
  });

  it("a name resolves like the pointer, and listArtifacts lists an aliased artifact once", async () => {
    const store = newStore();
    const value = "log line\n".repeat(10_000);
    const envelope = store.spill(value, { toolType: "logs", name: "auth-logs" }) as ArtifactPointer;
    expect(envelope.name).toBe("auth-logs");
    expect(store.get("auth-logs")).toBe(value);
    expect(store.getRef("auth-logs")).toEqual(store.getRef(envelope.pointer));
    const [, list] = artifactTools(store);
    const listed = (await list!.execute({})) as Array<{ pointer: string; name?: string }>;
    expect(listed.map((a) => [a.pointer, a.name])).toEqual([["artifact://0", "auth-logs"]]);
  });

  it("a value that cannot be serialized is a clear INVALID_OPTION, not a crash", () => {
    const store = newStore();
    const circular: { self?: unknown } = {};
    circular.self = circular;
    expect(codeOf(() => store.spill(circular, { toolType: "t" }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.spill({ n: 1n }, { toolType: "t" }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.spill("x", { toolType: "t", maxInlineBytes: -1 }))).toBe("INVALID_OPTION");
    expect(store.spill(undefined, { toolType: "t" })).toBeUndefined();
    expect(existsSync(store.dir)).toBe(false);
  });
});

describe("isPointer, approxByteSize and toModelHint", () => {
  it("approxByteSize measures what spill measures and gives 0 for the unserializable", () => {
    const circular: { self?: unknown } = {};
    circular.self = circular;
    expect(approxByteSize("é✓")).toBe(5);
    expect(approxByteSize({ a: "é" })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(approxByteSize(Uint8Array.of(1, 2, 3))).toBe(3);
    expect(approxByteSize(circular)).toBe(0);
    expect(approxByteSize(undefined)).toBe(0);
  });

  it("recognises pointer strings and envelopes only", () => {
    expect(isPointer("artifact://12")).toBe(true);
    expect(isPointer({ pointer: "artifact://3", preview: "", sizeBytes: 9, note: "" })).toBe(true);
    for (const v of [
      "artifact://",
      "artifact://x",
      "artifact://1/2",
      "art:1",
      5,
      null,
      { pointer: "artifact://1" },
      { pointer: 1, sizeBytes: 1 },
    ]) {
      expect(isPointer(v), JSON.stringify(v)).toBe(false);
    }
  });

  it("turns a ref into the model hint", () => {
    const store = newStore();
    const ref = store.save("first\nsecond", { toolType: "bash" });
    const hint = toModelHint(ref);
    expect(hint).toEqual({
      artifact_reference: "artifact://0",
      summary: "first second",
      hint: expect.stringContaining("artifact://0"),
      size_bytes: 12,
    });
  });
});

describe("artifactTools", () => {
  it("define getArtifact, listArtifacts and storeArtifact with object JSON schemas", () => {
    const tools = artifactTools(newStore());
    expect(tools.map((t) => t.name)).toEqual(["getArtifact", "listArtifacts", "storeArtifact"]);
    for (const t of tools) {
      expect(t.parameters.type).toBe("object");
      expect(t.description.length).toBeGreaterThan(10);
    }
    expect(tools[0]!.parameters.required).toEqual(["pointerOrName"]);
    expect(tools[2]!.parameters.required).toEqual(["name", "value"]);
  });

  it("bypass the spill threshold: store and get the full value however big", async () => {
    const store = newStore();
    const [get, list, put] = artifactTools(store);
    const huge = "z".repeat(200_000);
    const stored = (await put!.execute({ name: "big", value: huge, contentType: "text/x-log" })) as Record<string, unknown>;
    expect(stored).toEqual({ pointer: "artifact://0", preview: "z".repeat(200), sizeBytes: 200_000, name: "big" });
    expect(await get!.execute({ pointerOrName: "big" })).toBe(huge);
    expect(await get!.execute({ pointerOrName: "artifact://0" })).toBe(huge);
    expect(await get!.execute({ pointerOrName: "0" })).toBe(huge);
    expect(await get!.execute({ pointerOrName: "nope" })).toBe("[no artifact found for 'nope']");
    expect(await get!.execute({ pointerOrName: "artifact://../x" })).toBe("[no artifact found for 'artifact://../x']");
    expect(await list!.execute({})).toEqual([
      {
        pointer: "artifact://0",
        name: "big",
        toolType: "artifact",
        sizeBytes: 200_000,
        preview: "z".repeat(200),
        contentType: "text/x-log",
        storedAt: 42,
      },
    ]);
    await expect(put!.execute({ name: "", value: "x" })).rejects.toMatchObject({ code: "INVALID_OPTION" });
    await expect(get!.execute({})).rejects.toMatchObject({ code: "INVALID_OPTION" });
  });
});
