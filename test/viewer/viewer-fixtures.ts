import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { makePng } from "../support/png.ts";
import { viewsSession } from "../interchange/views-session.ts";

/** Values that would run code, load something or break out of their place if a page wrote them raw. */
export const HOSTILE_VIEW = {
  script: "</script><script>window.__pwned=1</script>",
  img: '<img src=x onerror="window.__pwned=2">',
  js: "[click me](javascript:window.__pwned=3)",
  data: "[data](data:text/html,<script>window.__pwned=4</script>)",
  remoteImage: "![pixel](http://127.0.0.2:9/pixel.png)",
  toolName: '<svg onload="window.__pwned=5">',
  model: '"><script>window.__pwned=6</script>',
  title: "<b>bold?</b><script>window.__pwned=7</script>",
};

/** An SVG that runs a script when opened as a document (never as an image). */
export const SVG_WITH_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>window.__pwned=8</script></svg>';

/**
 * A store with the views session (two branches, an image blob, a compaction, an artifact) and a
 * hand-written hostile session: prototype-named entry ids (`toString`, `constructor`, `__proto__`),
 * markup in every field a page shows, an SVG image with a script, a made-up MIME type.
 */
export async function viewerStore() {
  const views = await viewsSession();
  const dir = dirname(views.m.sessionFile!);
  const id = "0b1e5c0d-0000-7000-8000-00000000dead";
  const t = "2026-01-02T03:04:05.000Z";
  const svg = Buffer.from(SVG_WITH_SCRIPT).toString("base64");
  const lines = [
    { type: "session", version: 3, id, timestamp: t, cwd: join(views.root, "proj"), title: HOSTILE_VIEW.title },
    {
      type: "message",
      id: "toString",
      parentId: null,
      timestamp: t,
      message: {
        role: "user",
        content: `${HOSTILE_VIEW.script} ${HOSTILE_VIEW.img} ${HOSTILE_VIEW.js} ${HOSTILE_VIEW.data} ${HOSTILE_VIEW.remoteImage}`,
        timestamp: 1,
      },
    },
    {
      type: "message",
      id: "constructor",
      parentId: "toString",
      timestamp: t,
      message: {
        role: "assistant",
        model: HOSTILE_VIEW.model,
        content: [{ type: "toolCall", id: "__proto__", name: HOSTILE_VIEW.toolName, arguments: { command: HOSTILE_VIEW.script } }],
        timestamp: 2,
      },
    },
    {
      type: "message",
      id: "hasOwnProperty",
      parentId: "constructor",
      timestamp: t,
      message: { role: "user", content: "the other branch at a prototype-named fork", timestamp: 4 },
    },
    {
      type: "message",
      id: "__proto__",
      parentId: "constructor",
      timestamp: t,
      message: {
        role: "toolResult",
        toolCallId: "__proto__",
        toolName: HOSTILE_VIEW.toolName,
        content: [
          { type: "text", text: `${HOSTILE_VIEW.img}\n${Array.from({ length: 100 }, (_, i) => `output line ${i}`).join("\n")}` },
          { type: "image", data: svg, mimeType: "image/svg+xml" },
          { type: "image", data: makePng(2, 2, 1).toString("base64"), mimeType: 'text/html"><script>window.__pwned=9</script>' },
        ],
        isError: false,
        timestamp: 3,
      },
    },
  ];
  const hostilePath = join(dir, `2026-01-02T03-04-05-000Z_${id}.jsonl`);
  writeFileSync(hostilePath, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, { mode: 0o600 });
  return { ...views, hostile: { id, path: hostilePath } };
}
