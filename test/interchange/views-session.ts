import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Strings that would break out of HTML, a script element or a Markdown fence if written raw. */
export const HOSTILE = {
  script: "</script><script>document.title='pwned'</script>",
  img: "<img src=x onerror=\"document.title='pwned'\">",
  separators: "line\u2028separator\u2029paragraph",
  fence: "```\n# not a heading\n````",
};

/**
 * A session with every kind of entry the views show, on two branches forking after the first
 * assistant reply: user text (hostile strings included), thinking, a tool call and its result with
 * an image (stored as a blob), usage, a compaction on the active branch, a label, an artifact.
 */
export async function viewsSession() {
  const root = tempDir();
  const png = makePng(24, 16, 7).toString("base64");
  const m = await SessionManager.create(join(root, "proj"), { root });
  m.appendModelChange("claude-test-1");
  const u1 = m.appendMessage({ role: "user", content: `Please look. ${HOSTILE.script} ${HOSTILE.img}`, timestamp: 1 });
  const a1 = m.appendMessage({
    role: "assistant",
    model: "claude-test-1",
    provider: "anthropic",
    content: [
      { type: "thinking", thinking: `I should read the file. ${HOSTILE.separators}`, thinkingSignature: "sig" },
      { type: "text", text: "Reading it now." },
      { type: "toolCall", id: "call_1", name: "read", arguments: { path: "/tmp/a.png", note: HOSTILE.script } },
    ],
    usage: { input: 100, output: 20, cacheRead: 50, cacheWrite: 10, totalTokens: 180, cost: { total: 0.25 } },
    stopReason: "toolUse",
    timestamp: 2,
  });
  const r1 = m.appendMessage({
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "read",
    content: [
      { type: "text", text: `file read ${HOSTILE.fence}` },
      { type: "image", data: png, mimeType: "image/png" },
    ],
    isError: false,
    timestamp: 3,
  });
  m.appendLabelChange(r1, "checkpoint");
  const a2 = m.appendMessage({
    role: "assistant",
    model: "claude-test-1",
    content: [{ type: "text", text: "Active branch answer." }],
    usage: { input: 200, output: 30, cacheRead: 0, cacheWrite: 0, totalTokens: 230, cost: { total: 0.5 } },
    timestamp: 4,
  });
  m.appendCompaction("Summary of the work so far.", a2, 1234);
  m.appendMessage({ role: "user", content: "Active branch follow-up.", timestamp: 5 });
  const activeLeaf = m.getLeafId()!;
  m.branch(r1);
  m.appendMessage({ role: "user", content: "Other branch question.", timestamp: 6 });
  const otherLeaf = m.appendMessage({
    role: "assistant",
    model: "claude-test-1",
    content: [{ type: "text", text: "Other branch answer." }],
    timestamp: 7,
  });
  // Back on the active branch: the session's leaf is where the next append goes.
  m.branch(activeLeaf);
  m.appendMessage({ role: "user", content: "Active branch last word. See artifact://0, not artifact://9.", timestamp: 8 });
  m.artifacts!.save(`artifact text ${HOSTILE.script}`, { toolType: "bash", name: "build-log" });
  await m.close();
  return { root, m, png, ids: { u1, a1, r1, a2, activeLeaf, otherLeaf } };
}
