import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { sha } from "../support/sha.ts";

describe("SessionManager with blobs", () => {
  const png = makePng(40, 40, 3);
  const b64 = png.toString("base64");
  const url = `data:image/png;base64,${makePng(30, 30, 9).toString("base64")}`;
  const message = {
    role: "user",
    content: [
      { type: "text", text: "look" },
      { type: "image", data: b64, mimeType: "image/png" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: b64 } },
      { type: "image_url", image_url: { url } },
    ],
  };

  it("externalizes images on append, dedups across sessions and restores every string on reopen", async () => {
    const root = tempDir();
    const a = await SessionManager.create(join(root, "p1"), { root });
    const b = await SessionManager.create(join(root, "p2"), { root });
    const idA = a.appendMessage(message);
    b.appendMessage(message);
    expect(a.getEntry(idA)!.message).toBe(message); // memory keeps the inline data
    const lineA = readFileSync(a.sessionFile!, "utf8").split("\n")[1]!;
    expect(lineA).not.toContain(b64.slice(0, 200));
    expect(lineA).toContain(`blob:sha256:${sha(png)}`);
    expect(lineA).toContain(`blob:sha256:${sha(url)}`);
    expect(blobDirEntries(join(root, "blobs")).sort()).toEqual([sha(png), sha(url)].sort());
    expect(readFileSync(join(root, "blobs", sha(png))).equals(png)).toBe(true);
    expect(readFileSync(join(root, "blobs", sha(url)), "utf8")).toBe(url);
    await a.close();
    await b.close();

    const reopened = await SessionManager.open(a.sessionFile!, { root });
    expect(reopened.getEntry(idA)!.message).toEqual(message);
    await reopened.close();
  });

  it("lazy mode keeps refs in memory and resolves them on demand", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    const id = m.appendMessage(message);
    await m.close();
    const lazy = await SessionManager.open(m.sessionFile!, { root, rehydrate: "lazy" });
    const stored = lazy.getEntry(id)!.message as { content: Array<Record<string, unknown>> };
    expect(stored.content[1]!.data).toBe(`blob:sha256:${sha(png)}`);
    expect(lazy.rehydrate(lazy.getEntry(id)!).message).toEqual(message);
    expect(lazy.buildContext({ rehydrate: true }).messages[0]).toEqual(message);
    expect(lazy.buildContext().messages[0]).toBe(stored);
    await lazy.close();
  });

  it("a missing blob is a BLOB_MISSING warning and the ref is kept", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    const id = m.appendMessage(message);
    await m.close();
    unlinkSync(join(root, "blobs", sha(png)));
    const warnings: StoreWarning[] = [];
    const reopened = await SessionManager.open(m.sessionFile!, { root, onWarning: (w) => warnings.push(w) });
    const content = (reopened.getEntry(id)!.message as { content: Array<Record<string, any>> }).content;
    expect(content[1]!.data).toBe(`blob:sha256:${sha(png)}`);
    expect(content[2]!.source.data).toBe(`blob:sha256:${sha(png)}`);
    expect(content[3]!.image_url.url).toBe(url);
    expect(warnings.map((w) => w.code)).toEqual(["BLOB_MISSING", "BLOB_MISSING"]);
    expect(warnings[0]!.path).toBe(join(root, "blobs", sha(png)));
    await reopened.close();
  });

  it("a hostile ref in a session file is kept as text, never followed", async () => {
    const root = tempDir();
    const path = join(root, "hostile.jsonl");
    writeFileSync(
      path,
      `${[
        JSON.stringify({ type: "session", version: 3, id: "h", timestamp: "t", cwd: "/" }),
        JSON.stringify({
          type: "message",
          id: "aaaaaaaa",
          parentId: null,
          timestamp: "t",
          message: { role: "user", content: [{ type: "image", data: "blob:sha256:../../etc/passwd", mimeType: "image/png" }] },
        }),
      ].join("\n")}\n`,
    );
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.open(path, { root, onWarning: (w) => warnings.push(w) });
    expect((m.getEntry("aaaaaaaa")!.message as any).content[0].data).toBe("blob:sha256:../../etc/passwd");
    expect(warnings.map((w) => w.code)).toEqual(["INVALID_BLOB_REF"]);
    await m.close();
  });
});
