import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { cutCounters } from "../../src/prepare/cut-payloads.ts";
import { externalizeImages } from "../../src/prepare/externalize-images.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const header = { type: "session", version: 3, id: "0190a5d2-0000-7000-8000-00000000c0de", timestamp: "t", cwd: "/p" };
const pngs = [makePng(140, 140, 11), makePng(150, 130, 12), makePng(130, 150, 13), makePng(145, 145, 14)];
const b64 = pngs.map((p) => p.toString("base64"));

function message(id: string, parentId: string | null, content: unknown): Record<string, unknown> {
  return { type: "message", id, parentId, timestamp: "t", message: { role: "user", content } };
}

/** Lines of every shape, cut or not: the load must give what the whole line gives, line by line. */
function sessionLines(): { lines: string[]; cuttable: number } {
  const url = `data:image/png;base64,${b64[3]}`;
  const lines = [
    JSON.stringify(header),
    JSON.stringify(
      message("a1", null, [
        { type: "text", text: "see" },
        { type: "image", data: b64[0], mimeType: "image/png" },
      ]),
    ),
    JSON.stringify(message("a2", "a1", [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64[1] } }])),
    JSON.stringify(message("a3", "a2", [{ type: "image_url", image_url: { url } }])),
    // escaped slashes: not cut, read whole
    JSON.stringify(message("a4", "a3", [{ type: "image", data: b64[2], mimeType: "image/png" }])).replaceAll("/", "\\/"),
    // a duplicate data key: cut, but restoring refuses and the line is read whole
    JSON.stringify(message("a5", "a4", [{ type: "image", data: b64[0], mimeType: "image/png" }])).replace(
      '"data":',
      `"data":"${b64[1]}","data":`,
    ),
    // a small data URL next to a large image: externalized as the whole line's would be
    JSON.stringify(
      message("a6", "a5", [
        { type: "image", data: b64[2], mimeType: "image/png" },
        { type: "image_url", image_url: "data:image/png;base64,AAAA" },
      ]),
    ),
  ];
  return { lines, cuttable: 6 }; // a1, a2, a3, both payloads of a5, a6
}

function expectedEntries(lines: string[]): unknown[] {
  return lines.slice(1).map((line) => externalizeImages(JSON.parse(line), 1024).value);
}

describe("a lazy open cuts large image payloads out before parsing, with the refs of a whole-line parse", () => {
  it("every shape gives the entries of today's whole-line parse; images come back from the file", async () => {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const { lines, cuttable } = sessionLines();
    writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
    const before = { ...cutCounters };
    const m = await SessionManager.open(path, { root, readOnly: true, rehydrate: "lazy" });
    expect(cutCounters.payloadsCut - before.payloadsCut).toBe(cuttable);
    expect(cutCounters.restoresRefused - before.restoresRefused).toBe(1);
    expect(m.getEntries()).toEqual(expectedEntries(lines));
    // the refs resolve from the session's own lines, byte for byte
    const eager = await SessionManager.open(path, { root, readOnly: true, rehydrate: "eager" });
    expect(m.getEntries().map((e) => m.rehydrate(e))).toEqual(eager.getEntries());
    await eager.close();
    await m.close();
  });

  it("a line made invalid by a raw tab in its payload is reported and kept, never read as an entry", async () => {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const good = JSON.stringify(message("a1", null, [{ type: "image", data: b64[0], mimeType: "image/png" }]));
    const bad = JSON.stringify(message("a2", "a1", [{ type: "image", data: b64[1], mimeType: "image/png" }])).replace(
      b64[1]!,
      `${b64[1]!.slice(0, 800)}\t${b64[1]!.slice(800)}`,
    );
    const text = [JSON.stringify(header), good, bad].map((l) => `${l}\n`).join("");
    writeFileSync(path, text);
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.open(path, { root, rehydrate: "lazy", onWarning: (w) => warnings.push(w) });
    expect(m.getEntries().map((e) => e.id)).toEqual(["a1"]);
    expect(m.loadReport.malformed).toEqual([{ line: 3, offset: text.indexOf(bad), reason: expect.stringMatching(/^invalid JSON/) }]);
    expect(warnings.map((w) => w.code)).toContain("MALFORMED_LINES");
    await m.close();
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("records glued on one line with large images are each read, as today", async () => {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const glued =
      JSON.stringify(message("a1", null, [{ type: "image", data: b64[0], mimeType: "image/png" }])) +
      JSON.stringify(message("a2", "a1", [{ type: "image", data: b64[1], mimeType: "image/png" }]));
    writeFileSync(path, `${JSON.stringify(header)}\n${glued}\n`);
    const m = await SessionManager.open(path, { root, readOnly: true, rehydrate: "lazy" });
    expect(m.loadReport.repaired.length).toBe(1);
    const refs = m.getEntries().map((e) => JSON.stringify(e).match(/blob:sha256:[0-9a-f]{64}/)?.[0]);
    expect(refs).toEqual(pngs.slice(0, 2).map((p) => `blob:sha256:${sha(p)}`));
    expect(m.getEntries().map((e) => m.rehydrate(e))).toEqual([
      JSON.parse(glued.slice(0, glued.indexOf("}{") + 1)),
      JSON.parse(glued.slice(glued.indexOf("}{") + 1)),
    ]);
    await m.close();
  });
});

describe("an eager open finds refs on long lines as on short ones", () => {
  it("a long line (text of 20 KB) holding a ref gets its image back; a ':sha256:' in text alone changes nothing", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/p", { root });
    const long = "words: sha256: and :sha256: ".repeat(800);
    m.appendMessage({
      role: "user",
      content: [
        { type: "text", text: long },
        { type: "image", data: b64[0]!, mimeType: "image/png" },
      ],
    });
    m.appendMessage({ role: "user", content: [{ type: "text", text: long }] });
    m.appendMessage({ role: "user", content: [{ type: "image", data: b64[1]!, mimeType: "image/png" }] });
    const path = m.sessionFile!;
    await m.close();
    const text = readFileSync(path, "utf8");
    expect(text.split("\n").filter((l) => l.length > 8192 && l.includes("blob:sha256:")).length).toBe(1);
    const reopened = await SessionManager.open(path, { root, readOnly: true });
    const images = JSON.stringify(reopened.getEntries()).match(/"data":"[^"]*"/g);
    expect(images).toEqual([`"data":"${b64[0]}"`, `"data":"${b64[1]}"`]);
    await reopened.close();
  });
});
