import { describe, expect, it } from "vitest";
import type { SessionEntry, SessionHeader } from "../../src/format/types.ts";
import { htmlChunks } from "../../src/interchange/html.ts";
import { markdownChunks } from "../../src/interchange/markdown.ts";
import type { TranscriptSource } from "../../src/interchange/transcript-source.ts";

const PIXEL = "https://evil.example/pixel.png";
/** A value that, printed raw, ends its line (a heading, a `<summary>`'s HTML block) and plants a remote image. */
const HOSTILE = `x\n\n![t](${PIXEL})\n\n<img src="${PIXEL}">`;
/** The same without a line break: Markdown syntax in a heading, a backtick to leave a code span. */
const INLINE = `\` ![t](${PIXEL}) <img src="${PIXEL}"> \``;

function source(): TranscriptSource {
  const header = { type: "session", version: 3, id: `s${INLINE}`, timestamp: "2026-01-01T00:00:00Z", cwd: `/w${HOSTILE}`, title: HOSTILE };
  const entries = [
    { type: "message", id: "a1", parentId: null, timestamp: "t1", message: { role: "user", content: "hello" } },
    {
      type: "message",
      id: `a2${INLINE}`,
      parentId: "a1",
      timestamp: `t2${HOSTILE}`,
      message: { role: "assistant", model: HOSTILE, content: [{ type: "toolCall", id: HOSTILE, name: HOSTILE, arguments: {} }] },
    },
    {
      type: "message",
      id: "a3",
      parentId: `a2${INLINE}`,
      timestamp: "t3",
      message: { role: "toolResult", toolCallId: HOSTILE, toolName: HOSTILE, content: [{ type: "text", text: "out" }] },
    },
    { type: "model_change", id: "a4", parentId: "a3", timestamp: "t4", provider: "p", modelId: HOSTILE },
    { type: "message", id: "a5", parentId: "a4", timestamp: "t5", message: { role: "constructor", content: "odd role" } },
    { type: "message", id: "a6", parentId: "a5", timestamp: "t6", message: { role: "bashExecution", command: HOSTILE, output: HOSTILE } },
  ] as unknown as SessionEntry[];
  return {
    header: header as unknown as SessionHeader,
    entries,
    leafId: "a6",
    rehydrate: (v) => v,
    artifacts: [
      {
        id: "0",
        uri: "artifact://0",
        name: HOSTILE,
        toolType: "bash",
        summary: HOSTILE,
        contentType: "text/plain",
        sizeBytes: 3,
        text: "abc",
        cut: false,
      },
    ],
  };
}

/** The Markdown outside fenced blocks and code spans (where nothing is markup). */
function outsideCode(markdown: string): string {
  const kept: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    if (fence !== null) {
      if (line === fence) fence = null;
      continue;
    }
    const open = /^(`{3,})/.exec(line);
    if (open !== null) fence = open[1]!;
    else kept.push(line);
  }
  return kept.join("\n").replace(/(?<!`)(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, "");
}

/** Markdown that would load a remote resource: an image whose `!` is not escaped, any raw HTML tag but ours. */
function remoteLoads(markdown: string): string[] {
  const text = outsideCode(markdown);
  return [...text.matchAll(/(?<!\\)!\[[^\]]*\]\(|(?<!\\)<(?!\/?(?:details|summary)>)[a-z]/gi)].map((m) => m[0]);
}

describe("issue 32 #17: every value in a view is escaped for where it lands", () => {
  it("Markdown: a line break or Markdown in a tool name, model, id, title, cwd or artifact name stays where it belongs", () => {
    const md = [...markdownChunks(source())].join("");
    expect(remoteLoads(md)).toEqual([]);
    // each heading is one line, and a <summary> never spans lines
    for (const line of md.split("\n").filter((l) => l.includes("<summary>"))) expect(line).toMatch(/<\/summary>/);
    expect(md.split("\n").filter((l) => l.startsWith("## ")).length).toBe(7); // six entries and "Artifacts"
    // an unknown role is named as it is, never by an Object.prototype member
    expect(md).not.toContain("[native code]");
    expect(md).toMatch(/## constructor · /);
  });

  it("HTML: the same values are text, never markup, and an unknown role is named as it is", () => {
    const html = [...htmlChunks(source())].join("");
    expect(html).not.toContain(`<img src="${PIXEL}"`);
    expect(html).not.toContain("[native code]");
    expect(html).toContain("<h3>constructor</h3>");
  });
});
