import { describe, expect, it } from "vitest";
import { entryHtml } from "../../src/interchange/entry-html.ts";
import { markdownToHtml } from "../../src/interchange/markdown-html.ts";

/**
 * A hostile transcript's text can make a Markdown parser's time grow with the square of its length
 * (a run of `**`: 40,000 characters took 19 s) or exhaust the stack (blockquotes nested thousands
 * deep): one entry would then freeze the viewer for everyone, or fail its page and its export.
 */
describe("Markdown a parser chokes on is shown as plain text, never parsed", () => {
  it("thousands of emphasis delimiters, table pipes or nested quotes in one paragraph", () => {
    // a line that looks like a fence but is none ("```a`" is inline code) does not hide what follows
    for (const text of [
      `\`\`\`a\`\n${"**".repeat(5000)}a`,
      `${"**".repeat(5000)}a`,
      "_a".repeat(5000),
      `${"|a".repeat(2000)}\n${"|-".repeat(2000)}`,
      ">".repeat(20000),
    ]) {
      const html = markdownToHtml(text);
      expect(html.startsWith('<pre class="plain">'), text.slice(0, 20)).toBe(true);
      expect(html).not.toContain("<strong>");
    }
  });

  it("a long document of ordinary Markdown, and a big fenced code block full of delimiters, are still rendered", () => {
    const prose = Array.from(
      { length: 300 },
      (_, i) => `Para ${i} with **bold**, _it_, \`code\` and [a link](https://example.com/${i}).`,
    ).join("\n\n");
    expect(markdownToHtml(prose)).toContain("<strong>bold</strong>");
    const lines = Array.from({ length: 2000 }, () => "int *p = &a[i]; /* x_y */ q->r | s;").join("\n");
    const code = `Here:\n\n\`\`\`c\n${lines}\n\`\`\`\n\nDone **now**.`;
    const html = markdownToHtml(code);
    expect(html).toContain('<pre class="code" data-lang="c">');
    expect(html).toContain("<strong>now</strong>");
  });
});

describe("a message text too long for Markdown is folded like a tool's output", () => {
  it("shows its first lines and a show-all link, not megabytes of page", () => {
    const text = `${"a long line of text\n".repeat(60_000)}the end`;
    const entry = {
      type: "message",
      id: "big",
      parentId: null,
      timestamp: "2026-01-02T03:04:05.000Z",
      message: { role: "assistant", content: [{ type: "text", text }], timestamp: 1 },
    };
    const html = entryHtml(entry as never, {
      sessionId: "s",
      calls: new Map(),
      imageLink: () => null,
      fullLink: (id, index) => `/s/s/text/${id}/${index}`,
    });
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(html.length).toBeLessThan(20_000);
    expect(html).toContain('href="/s/s/text/big/0"');
  });
});
