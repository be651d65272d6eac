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
