import { describe, expect, it } from "vitest";
import * as source from "../src/index.ts";

describe("package entry", () => {
  it("the compiled entry (package.json exports) offers exactly the public surface of src/index.ts", async () => {
    const compiled = await import("../dist/index.js" as string);
    expect(Object.keys(compiled).sort()).toEqual(Object.keys(source).sort());
    expect(typeof compiled.SessionManager.create).toBe("function");
    expect(compiled.ERROR_CODES).toEqual(source.ERROR_CODES);
  });
});

describe("package entry transcript-store/pi", () => {
  it("package.json exports ./pi to the compiled facade, which offers exactly src/pi/index.ts's surface", async () => {
    const { readFileSync } = await import("node:fs");
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.exports["./pi"]).toEqual({ types: "./dist/pi/index.d.ts", default: "./dist/pi/index.js" });
    const facade = await import("../src/pi/index.ts");
    const compiled = await import("../dist/pi/index.js" as string);
    expect(Object.keys(compiled).sort()).toEqual(Object.keys(facade).sort());
    const viaName = await import("transcript-store/pi" as string);
    expect(typeof viaName.SessionManager.continueRecent).toBe("function");
    expect(viaName.CURRENT_SESSION_VERSION).toBe(3);
  });
});

describe("package entry transcript-store/pi/agent", () => {
  it("package.json exports ./pi/agent: the facade's very class (typed as pi's), nothing else", async () => {
    const { readFileSync } = await import("node:fs");
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.exports["./pi/agent"]).toEqual({ types: "./dist/pi/agent.d.ts", default: "./dist/pi/agent.js" });
    const viaName = await import("transcript-store/pi/agent" as string);
    const plain = await import("transcript-store/pi" as string);
    expect(Object.keys(viaName)).toEqual(["SessionManager"]);
    expect(viaName.SessionManager).toBe(plain.SessionManager);
  });
});

describe("package entry transcript-store/conformance", () => {
  it("package.json exports ./conformance to the compiled suite, which offers exactly src/conformance/index.ts's surface", async () => {
    const { readFileSync } = await import("node:fs");
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.exports["./conformance"]).toEqual({ types: "./dist/conformance/index.d.ts", default: "./dist/conformance/index.js" });
    const source = await import("../src/conformance/index.ts");
    const viaName = await import("transcript-store/conformance" as string);
    expect(Object.keys(viaName).sort()).toEqual(Object.keys(source).sort());
    // with a framework that has only `test`, each test is named after its group and backend; with
    // `describe`, one group per describe: the same tests either way
    const backend = { name: "x", sessionFiles: true, options: async () => ({}) };
    const flat: string[] = [];
    viaName.runConformance({ test: (name: string) => flat.push(name) }, backend);
    const grouped: string[] = [];
    const describe = (group: string, fn: () => void) => {
      const before = grouped.length;
      fn();
      for (let i = before; i < grouped.length; i++) grouped[i] = `${group}: ${grouped[i]}`;
    };
    viaName.runConformance({ describe, test: (name: string) => grouped.push(name) }, backend);
    expect(flat).toEqual(grouped);
    expect(flat.filter((n) => n.startsWith("session manager [x]: ")).length).toBeGreaterThanOrEqual(10);
    expect(flat.filter((n) => n.startsWith("lifecycle [x]: ")).length).toBeGreaterThanOrEqual(9);
  });
});
