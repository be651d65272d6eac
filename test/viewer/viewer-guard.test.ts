import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningViewer, startViewer } from "../../src/viewer/server.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { http, login } from "./viewer-http.ts";
import { viewerStore } from "./viewer-fixtures.ts";

describe("serve: who may ask, and what every answer carries", () => {
  let s: Awaited<ReturnType<typeof viewerStore>>;
  let ro: RunningViewer;
  let rw: RunningViewer;
  // tempDir() removes the store after each test: a store per test.
  beforeEach(async () => {
    s = await viewerStore();
    ro = await startViewer({ root: s.root });
    rw = await startViewer({ root: s.root, write: true });
  });
  afterEach(async () => {
    await ro.close();
    await rw.close();
  });
  const base = (v: RunningViewer) => `http://127.0.0.1:${v.port}`;

  it("binds 127.0.0.1 and prints a URL with a 256-bit token", () => {
    expect(ro.server.address()).toMatchObject({ address: "127.0.0.1" });
    expect(ro.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
  });

  it("refuses every path without the token (401), the event stream and static files included", async () => {
    for (const path of ["/", "/api/search?q=x", `/s/${s.m.sessionId}`, `/s/${s.m.sessionId}/events`, "/static/viewer.js", "/usage"]) {
      const a = await http(`${base(ro)}${path}`);
      expect(a.status, path).toBe(401);
      expect(a.body).not.toContain(s.m.sessionId);
    }
    expect((await http(`${base(ro)}/?token=wrong`)).status).toBe(401);
    expect((await http(`${base(ro)}/`, { cookie: "ts_viewer=wrong" })).status).toBe(401);
  });

  it("refuses a Host that is not the server's (DNS rebinding), even with the token", async () => {
    const a = await http(ro.url, { host: `attacker.example:${ro.port}` });
    expect(a.status).toBe(421);
    const cookie = await login(ro.url);
    expect((await http(`${base(ro)}/`, { cookie, host: "attacker.example" })).status).toBe(421);
    expect((await http(`${base(ro)}/`, { cookie, host: `localhost:${ro.port}` })).status).toBe(200);
  });

  it("trades the token for an HttpOnly SameSite=Strict cookie and drops it from the address", async () => {
    const a = await http(`${ro.url}&x=1`);
    expect(a.status).toBe(303);
    expect(a.headers.location).toBe("/?x=1");
    expect(String(a.headers["set-cookie"])).toMatch(/^ts_viewer=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
  });

  it("sends a strict CSP and no-sniff/no-referrer/no-frame headers on every page", async () => {
    const cookie = await login(ro.url);
    for (const path of ["/", `/s/${s.m.sessionId}`, "/usage", "/trash", "/compare"]) {
      const a = await http(`${base(ro)}${path}`, { cookie });
      expect(a.status, `${path} ${/<main id="main">(.*)<\/main>/s.exec(a.body)?.[1]}`).toBe(200);
      expect(a.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(a.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(a.headers["content-security-policy"]).not.toContain("unsafe-inline");
      expect(a.headers["x-content-type-options"]).toBe("nosniff");
      expect(a.headers["referrer-policy"]).toBe("no-referrer");
      expect(a.headers["x-frame-options"]).toBe("DENY");
      // no inline script or style, no address outside the server
      expect(a.body).not.toMatch(/<script(?![^>]*\ssrc="\/static\/)/);
      expect(a.body).not.toMatch(/\sstyle=|<style/);
      expect(a.body).not.toMatch(/(src|href)="(https?:)?\/\/(?!127\.0\.0\.1)/);
    }
  });

  it("serves images sandboxed (an SVG opened on its own runs nothing) and refuses non-image types", async () => {
    const cookie = await login(ro.url);
    const page = await http(`${base(ro)}/s/${s.hostile.id}`, { cookie });
    const links = [...page.body.matchAll(/src="(\/s\/[^"]+\/image\/[^"]+)"/g)].map((m) => m[1]!.replace(/&#38;/g, "&"));
    expect(links.length).toBe(1);
    const svg = await http(`${base(ro)}${links[0]}`, { cookie });
    expect(svg.headers["content-type"]).toBe("image/svg+xml");
    expect(svg.headers["content-security-policy"]).toMatch(/^sandbox; default-src 'none'/);
    // the made-up MIME type is neither linked nor served
    expect(page.body).toContain("that is not base64 image data");
    expect((await http(`${base(ro)}/s/${s.hostile.id}/image/__proto__/2`, { cookie })).status).toBe(404);
  });

  it("has no write action without --write: confirm pages and posts are 403 and nothing changes", async () => {
    const cookie = await login(ro.url);
    expect((await http(`${base(ro)}/s/${s.m.sessionId}/confirm?action=rm`, { cookie })).status).toBe(403);
    const post = await http(`${base(ro)}/s/${s.m.sessionId}/action`, { cookie, method: "POST", body: "action=rm&csrf=x" });
    expect(post.status).toBe(403);
    expect((await SessionManager.listAll({ root: s.root })).map((x) => x.id)).toContain(s.m.sessionId);
  });

  it("with --write, an action needs the session's CSRF token from its confirmation page", async () => {
    const cookie = await login(rw.url);
    const id = s.m.sessionId;
    const bad = await http(`${base(rw)}/s/${id}/action`, { cookie, method: "POST", body: "action=pin&csrf=forged" });
    expect(bad.status).toBe(403);
    const confirm = await http(`${base(rw)}/s/${id}/confirm?action=pin`, { cookie });
    expect(confirm.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
    // another session's token does not work here
    const other = await http(`${base(rw)}/s/${s.hostile.id}/confirm?action=pin`, { cookie });
    const otherCsrf = /name="csrf" value="([^"]+)"/.exec(other.body)![1]!;
    expect((await http(`${base(rw)}/s/${id}/action`, { cookie, method: "POST", body: `action=pin&csrf=${otherCsrf}` })).status).toBe(403);
    const ok = await http(`${base(rw)}/s/${id}/action`, { cookie, method: "POST", body: `action=pin&csrf=${encodeURIComponent(csrf)}` });
    expect(ok.status).toBe(303);
    const listed = (await SessionManager.listAll({ root: s.root })).find((x) => x.id === id);
    expect(listed?.pinned).toBe(true);
  });
});
