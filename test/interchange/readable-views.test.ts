import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HTML_CSP } from "../../src/interchange/html-assets.ts";
import { exportSession, type ViewFormat } from "../../src/interchange/export-session.ts";
import { fenceFor, jsonForScript } from "../../src/interchange/html-text.ts";
import { tempDir } from "../support/temp-dir.ts";
import { HOSTILE, viewsSession } from "./views-session.ts";

async function render(format: ViewFormat, branch?: string) {
  const s = await viewsSession();
  let out = "";
  for await (const chunk of exportSession(s.m.sessionFile!, { root: s.root, format, ...(branch === undefined ? {} : { branch }) }))
    out += chunk;
  return { s, out };
}

describe("exportSession --to markdown", () => {
  it("writes the active branch with roles, folded thinking and tool blocks, the image and the artifact", async () => {
    const { s, out } = await render("markdown");
    for (const text of [
      "Please look.",
      "Reading it now.",
      "Active branch answer.",
      "Summary of the work so far.",
      "Active branch last word.",
    ])
      expect(out).toContain(text);
    expect(out).not.toContain("Other branch");
    expect(out).toContain(`## User · `);
    expect(out).toContain("## Assistant · claude-test-1 · ");
    expect(out).toContain("## Tool result: read · ");
    expect(out).toContain("<details><summary>Thinking</summary>");
    expect(out).toContain("<details><summary>Tool call: read (call_1)</summary>");
    expect(out).toContain(`![image](data:image/png;base64,${s.png})`);
    expect(out).toContain(`> Fork: 2 branches continue from \`${s.ids.r1}\``);
    expect(out).toContain("artifact://0 (build-log): bash");
    expect(out).toContain(`artifact text ${HOSTILE.script}`);
  });

  it("fences tool output with more backticks than the output holds, so it cannot end the block", async () => {
    const { out } = await render("markdown");
    expect(fenceFor(HOSTILE.fence)).toBe("`````");
    expect(out).toContain(`\`\`\`\`\`text\nfile read ${HOSTILE.fence}\n\`\`\`\`\``);
  });

  it("--branch writes the other branch", async () => {
    const s0 = await viewsSession();
    let out = "";
    for await (const chunk of exportSession(s0.m.sessionFile!, { root: s0.root, format: "markdown", branch: s0.ids.otherLeaf }))
      out += chunk;
    expect(out).toContain("Other branch answer.");
    expect(out).not.toContain("Active branch");
  });
});

describe("exportSession --to html", () => {
  it("escapes every transcript string: no markup, no script end, no raw line separator from the session", async () => {
    const { out } = await render("html");
    // The page's own two script elements are the only ones.
    expect(out.match(/<script/g)).toHaveLength(2);
    expect(out.match(/<\/script>/g)).toHaveLength(2);
    expect(out).not.toContain("<img src=x");
    expect(out).not.toContain('onerror="');
    expect(out).toContain("&#60;/script&#62;&#60;script&#62;document.title=&#39;pwned&#39;&#60;/script&#62;");
    expect(out).not.toMatch(/[\u2028\u2029]/);
    expect(out).toContain(`<meta http-equiv="Content-Security-Policy" content="${HTML_CSP.replace(/'/g, "&#39;")}">`);
  });

  it("inline JSON escapes what could end a script element or a line", () => {
    const text = jsonForScript({ a: `${HOSTILE.script}${HOSTILE.separators}<!--&` });
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual({ a: `${HOSTILE.script}${HOSTILE.separators}<!--&` });
  });

  it("holds every entry of the tree, the active branch shown and the other hidden", async () => {
    const { s, out } = await render("html");
    const article = (id: string) => new RegExp(`<article [^>]*data-entry="${id}"[^>]*>`).exec(out)?.[0] ?? "";
    expect(article(s.ids.u1)).not.toContain("hidden");
    expect(article(s.ids.otherLeaf)).toContain(" hidden");
    expect(out).toContain("Other branch answer.");
    expect(out).toContain(`<img alt="image 2 of the entry" loading="lazy" src="data:image/png;base64,${s.png}">`);
    expect(out).toContain('<details class="thinking"><summary>Thinking</summary>');
    // the viewer's renderer: a tool call named by what it did, its result under that name
    expect(out).toContain('<details class="tool-call"><summary><span class="tool-name">read</span> <code>read /tmp/a.png</code></summary>');
    expect(out).toContain("<h3>↳ read /tmp/a.png</h3>");
  });

  it("embeds the artifacts and links a mention of one that is embedded", async () => {
    const { out } = await render("html");
    expect(out).toContain('<details class="artifact" id="artifact-0"><summary>artifact://0 (build-log): bash, ');
    expect(out).toContain("<pre>artifact text &#60;/script&#62;");
    expect(out).toContain('See <a href="#artifact-0">artifact://0</a>, not artifact://9.');
  });
});

describe("exportSession --to html, hostile ids and header", () => {
  it("escapes an entry id, a title and a cwd from the file in attributes, text and the JSON data block", async () => {
    const root = tempDir();
    const dir = join(root, "sessions", "--x--");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "2025-01-01T00-00-00-000Z_0197a000-0000-7000-8000-0000000000aa.jsonl");
    const badId = `x"><img src=y onerror=alert(1)>`;
    const header = { type: "session", version: 3, id: "0197a000-0000-7000-8000-0000000000aa", timestamp: "2025-01-01T00:00:00.000Z" };
    const lines = [
      { ...header, cwd: "/</title><script>alert(1)</script>", title: "</title><script>alert(2)</script>" },
      { type: "message", id: badId, parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "hi" } },
    ];
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    let out = "";
    for await (const chunk of exportSession(file, { root, format: "html" })) out += chunk;
    expect(out).not.toContain("<img src=y");
    expect(out).not.toContain("<script>alert");
    expect(out.match(/<script/g)).toHaveLength(2);
    expect(out).toContain(`data-entry="x&#34;&#62;&#60;img src=y onerror=alert(1)&#62;"`);
    expect(out).toContain('"x\\"\\u003e\\u003cimg src=y onerror=alert(1)\\u003e"');
  });
});
