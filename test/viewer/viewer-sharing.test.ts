import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { startViewer } from "../../src/viewer/server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { http, login } from "./viewer-http.ts";

const SECRET = `ghp_${"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}`;

describe("serve --redact: the sharing view shows no secret anywhere", () => {
  it("list, session page, show-all text, artifact, search and stats hold only markers", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/share", { root });
    m.appendMessage({ role: "user", content: `use token ${SECRET} please`, timestamp: 1 });
    m.appendMessage({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [{ type: "text", text: `${Array.from({ length: 60 }, (_, i) => `line ${i}`).join("\n")}\nexport GITHUB_TOKEN=${SECRET}` }],
      isError: false,
      timestamp: 2,
    });
    m.artifacts!.save(`artifact holding ${SECRET}`, { toolType: "bash", name: "log" });
    await m.close();
    const viewer = await startViewer({ root, sharingView: true });
    try {
      const cookie = await login(viewer.url);
      const base = `http://127.0.0.1:${viewer.port}`;
      const id = m.sessionId;
      const page = await http(`${base}/s/${id}`, { cookie });
      const showAll = /href="([^"]+\/text\/[^"]+)"/.exec(page.body)![1]!;
      const bodies = [
        (await http(`${base}/`, { cookie })).body,
        page.body,
        (await http(`${base}${showAll}`, { cookie })).body,
        (await http(`${base}/s/${id}/artifact/0`, { cookie })).body,
        (await http(`${base}/api/search?q=token`, { cookie })).body,
        (await http(`${base}/api/sessions`, { cookie })).body,
        (await http(`${base}/s/${id}/stats`, { cookie })).body,
      ];
      for (const body of bodies) expect(body).not.toContain(SECRET.slice(4, 20));
      expect(bodies[2]).toContain("GITHUB_TOKEN=");
      expect(bodies[3]).toContain("artifact holding");
    } finally {
      await viewer.close();
    }
    // without --redact the owner sees what they stored
    const own = await startViewer({ root });
    try {
      const cookie = await login(own.url);
      expect((await http(`http://127.0.0.1:${own.port}/s/${m.sessionId}`, { cookie })).body).toContain(SECRET);
    } finally {
      await own.close();
    }
  });
});
