import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { startViewer } from "../../src/viewer/server.ts";
import { openSessionView } from "../../src/viewer/session-data.ts";
import { sessionHtml } from "../../src/viewer/session-view.ts";
import { ViewerStore } from "../../src/viewer/viewer-store.ts";
import { tempDir } from "../support/temp-dir.ts";
import { http, login } from "./viewer-http.ts";
import { viewerStore } from "./viewer-fixtures.ts";

const SECRET = `ghp_${"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}`;

/** A raw v3 session file with the given id and user messages (one branch). */
function rawSession(dir: string, id: string, texts: string[]): string {
  const t = "2026-01-02T03:04:05.000Z";
  const lines: unknown[] = [{ type: "session", version: 3, id, timestamp: t, cwd: "/work/attack" }];
  for (const [i, text] of texts.entries())
    lines.push({
      type: "message",
      id: `m${i}`,
      parentId: i === 0 ? null : `m${i - 1}`,
      timestamp: t,
      message: { role: "user", content: text, timestamp: i + 1 },
    });
  const path = join(dir, `2026-01-02T03-04-05-000Z_${id}.jsonl`);
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, { mode: 0o600 });
  return path;
}

describe("serve under attack: what a hostile request, page or file cannot do", () => {
  it("the login redirect never leaves the server (a path of slashes is no other host)", async () => {
    const s = await viewerStore();
    const v = await startViewer({ root: s.root });
    try {
      for (const path of ["/.//evil.example", "/./\\evil.example", "//evil.example/"]) {
        const a = await http(`http://127.0.0.1:${v.port}/`, { rawPath: `${path}?token=${v.token}` });
        expect(a.status, path).toBe(303);
        const location = String(a.headers.location);
        expect(new URL(location, "http://127.0.0.1/").host, `${path} → ${location}`).toBe("127.0.0.1");
      }
    } finally {
      await v.close();
    }
  });

  it("two viewers on one machine keep their own cookies (a login to one does not log the other out)", async () => {
    const s = await viewerStore();
    const [a, b] = [await startViewer({ root: s.root }), await startViewer({ root: s.root })];
    try {
      const [ca, cb] = [await login(a.url), await login(b.url)];
      // cookies are per host, not per port: a browser holds one value per name for 127.0.0.1
      expect(ca.split("=")[0]).not.toBe(cb.split("=")[0]);
      // the browser sends both cookies to each server: each still admits its own
      for (const v of [a, b]) expect((await http(`http://127.0.0.1:${v.port}/`, { cookie: `${ca}; ${cb}` })).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a malformed percent-escape in a path is a 400, not a server error", async () => {
    const s = await viewerStore();
    const v = await startViewer({ root: s.root });
    try {
      const cookie = await login(v.url);
      const base = `http://127.0.0.1:${v.port}`;
      for (const path of [
        "/s/%E0%A4%A",
        `/s/${s.m.sessionId}/artifact/%E0`,
        `/s/${s.m.sessionId}/image/%E0/0`,
        `/s/${s.m.sessionId}/text/%/0`,
      ]) {
        const a = await http(`${base}${path}`, { cookie });
        expect(a.status, path).toBe(400);
      }
    } finally {
      await v.close();
    }
  });

  it("an action posted again lands on the confirmed session only, never on one whose id it prefixes", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    m.appendMessage({ role: "user", content: "first", timestamp: 1 });
    await m.close();
    const dir = dirname(m.sessionFile!);
    const longer = `${m.sessionId}0`;
    rawSession(dir, longer, ["the other session"]);
    const v = await startViewer({ root, write: true });
    try {
      const cookie = await login(v.url);
      const base = `http://127.0.0.1:${v.port}`;
      const confirm = await http(`${base}/s/${m.sessionId}/confirm?action=rm`, { cookie });
      const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
      const body = `action=rm&csrf=${encodeURIComponent(csrf)}`;
      expect((await http(`${base}/s/${m.sessionId}/action`, { cookie, method: "POST", body })).status).toBe(303);
      // a double click, or the back button and submit again
      const again = await http(`${base}/s/${m.sessionId}/action`, { cookie, method: "POST", body });
      expect(again.status).toBe(404);
      expect((await SessionManager.listAll({ root })).map((x) => x.id)).toContain(longer);
    } finally {
      await v.close();
    }
  });

  it("a purge posted again purges the confirmed trash entry only, never one its id prefixes", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    m.appendMessage({ role: "user", content: "first", timestamp: 1 });
    await m.close();
    const v = await startViewer({ root, write: true });
    try {
      const cookie = await login(v.url);
      const base = `http://127.0.0.1:${v.port}`;
      const first = await Lifecycle.open({ root }).rm((await SessionManager.listAll({ root }))[0]!);
      const trashId = first.trashId;
      // a session whose id begins with that trash id (ids come from transcripts), removed too
      rawSession(dirname(m.sessionFile!), `${trashId}x`, ["kept in the trash"]);
      const other = (await SessionManager.listAll({ root })).find((x) => x.id === `${trashId}x`)!;
      await Lifecycle.open({ root }).rm(other);
      const confirm = await http(`${base}/trash/confirm?action=purge&id=${encodeURIComponent(trashId)}`, { cookie });
      const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
      const body = `action=purge&id=${encodeURIComponent(trashId)}&csrf=${encodeURIComponent(csrf)}`;
      expect((await http(`${base}/trash/action`, { cookie, method: "POST", body })).status).toBe(303);
      expect((await http(`${base}/trash/action`, { cookie, method: "POST", body })).status).toBe(404);
      const left = await Lifecycle.open({ root }).listTrash();
      expect(left.map((t) => t.sessionId)).toEqual([`${trashId}x`]);
    } finally {
      await v.close();
    }
  });

  it("a confirmation page says only what the action does: an `at` on an rm is not shown as if it narrowed it", async () => {
    const s = await viewerStore();
    const v = await startViewer({ root: s.root, write: true });
    try {
      const cookie = await login(v.url);
      const a = await http(`http://127.0.0.1:${v.port}/s/${s.m.sessionId}/confirm?action=rm&at=${s.ids.otherLeaf}`, { cookie });
      expect(a.status).toBe(200);
      expect(a.body).not.toContain("at entry");
      expect(a.body).not.toContain('name="at"');
      const fork = await http(`http://127.0.0.1:${v.port}/s/${s.m.sessionId}/confirm?action=fork&at=${s.ids.otherLeaf}`, { cookie });
      expect(fork.body).toContain(`at entry <code>${s.ids.otherLeaf}</code>`);
    } finally {
      await v.close();
    }
  });

  it("the export link downloads the whole frozen page, sandboxed, as an attachment", async () => {
    const s = await viewerStore();
    const v = await startViewer({ root: s.root, write: true });
    try {
      const cookie = await login(v.url);
      const a = await http(`http://127.0.0.1:${v.port}/s/${s.hostile.id}/export.html`, { cookie });
      expect(a.status).toBe(200);
      expect(a.headers["content-disposition"]).toBe(`attachment; filename="${s.hostile.id}.html"`);
      expect(a.headers["content-security-policy"]).toMatch(/^sandbox; /);
      expect(a.body).toMatch(/^<!doctype html>/i);
      expect(a.body.trimEnd()).toMatch(/<\/html>$/);
      expect(a.body).not.toContain("<script>window.__pwned");
    } finally {
      await v.close();
    }
  });

  it("a session whose header time is no date does not fail the list or the sessions API for every other one", async () => {
    const s = await viewerStore();
    const id = "0b1e5c0d-0000-7000-8000-0000000bad70";
    const path = rawSession(dirname(s.m.sessionFile!), id, ["an odd one"]);
    writeFileSync(
      path,
      readFileSync(path, "utf8").replace('"timestamp":"2026-01-02T03:04:05.000Z","cwd"', '"timestamp":"not a date","cwd"'),
    );
    const v = await startViewer({ root: s.root });
    try {
      const cookie = await login(v.url);
      for (const path of ["/", "/api/sessions"]) {
        const a = await http(`http://127.0.0.1:${v.port}${path}`, { cookie });
        expect(a.status, path).toBe(200);
        expect(a.body, path).toContain(s.m.sessionId);
      }
      expect((await http(`http://127.0.0.1:${v.port}/s/${id}`, { cookie })).body).toContain("an odd one");
    } finally {
      await v.close();
    }
  });

  it("the sharing view's search is no oracle: a redacted secret's characters find nothing", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/share", { root });
    m.appendMessage({ role: "user", content: `use token ${SECRET} please`, timestamp: 1 });
    await m.close();
    const v = await startViewer({ root, sharingView: true });
    try {
      const cookie = await login(v.url);
      const base = `http://127.0.0.1:${v.port}`;
      const search = async (q: string) =>
        JSON.parse((await http(`${base}/api/search?prefix=1&q=${encodeURIComponent(q)}`, { cookie })).body).hits as unknown[];
      // words the sharing view shows still find the entry
      expect(await search("please")).toHaveLength(1);
      // the secret, whole or by prefix, does not: else its characters could be guessed one by one
      for (const q of [SECRET, SECRET.slice(4, 12), `${SECRET.slice(4, 9)}*`, `token ${SECRET.slice(4, 10)}*`])
        expect(await search(q), q).toHaveLength(0);
    } finally {
      await v.close();
    }
  });
});

describe("serve under attack: a session file rewritten while it is viewed", () => {
  it("a file rewritten in place (same inode, lines moved) is read again, never through the old offsets", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    m.appendMessage({ role: "user", content: "seed", timestamp: 1 });
    await m.close();
    const dir = dirname(m.sessionFile!);
    const id = "0b1e5c0d-0000-7000-8000-00000000beef";
    const path = rawSession(dir, id, ["a".repeat(100), "b".repeat(100)]);
    const store = new ViewerStore({ root });
    const info = (await store.listing()).find((x) => x.id === id)!;
    const page = async () => {
      const v = await openSessionView(store, info, { redact: false });
      try {
        return sessionHtml(v, null, [], "");
      } finally {
        await v.close();
      }
    };
    expect(await page()).toContain("b".repeat(100));
    const ino = statSync(path).ino;
    // The same bytes up to where the last scan stopped, but the lines inside moved (an in-place
    // rewrite, or a new file on a reused inode), then a line appended.
    rawSession(dir, id, ["c".repeat(90), "d".repeat(110), "e".repeat(5)]);
    expect(statSync(path).ino).toBe(ino);
    const after = await page();
    for (const text of ["c".repeat(90), "d".repeat(110), "e".repeat(5)]) expect(after).toContain(text);
  });
});

/** A GET whose answer may be cut off: resolves to its status and whether it ended cleanly (not aborted). */
function download(url: string, cookie: string): Promise<{ status: number; complete: boolean }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers: { Cookie: cookie } }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve({ status: res.statusCode ?? 0, complete: res.complete }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, complete: false }));
      res.on("aborted", () => resolve({ status: res.statusCode ?? 0, complete: false }));
    });
    req.on("error", () => resolve({ status: 0, complete: false }));
    req.end();
  });
}

describe("serve under attack: a value nested thousands deep", () => {
  it("shows its session page (as stored and shared), compact, with the entries around it", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    m.appendMessage({ role: "user", content: "before the deep one", timestamp: 1 });
    await m.close();
    const depth = 10_000;
    const call = `{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls","deep":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
    const message = `{"role":"assistant","content":[${call}],"timestamp":2}`;
    const ts = "2026-01-02T03:04:05.000Z";
    appendFileSync(
      m.sessionFile!,
      `{"type":"message","id":"deep","parentId":"${m.getLeafId()}","timestamp":"${ts}","message":${message}}\n`,
    );
    for (const sharingView of [false, true]) {
      const v = await startViewer({ root, sharingView });
      try {
        const cookie = await login(v.url);
        const a = await http(`http://127.0.0.1:${v.port}/s/${m.sessionId}`, { cookie });
        expect(a.status, `sharing ${sharingView}: ${a.body.slice(-300)}`).toBe(200);
        expect(a.body).toContain("before the deep one");
        // the sharing view cannot walk it to redact it: a note stands in its place, never the raw value
        expect(a.body).toContain(sharingView ? "nested too deep to redact" : "$ ls");
        // shown compact: an indented form would grow with the square of the depth
        expect(a.body.length).toBeLessThan(200_000);
        if (!sharingView) continue;
        // its export (which the library cannot write yet) fails as a download, never a cut-off file that looks whole
        const write = await startViewer({ root, write: true });
        try {
          const d = await download(`http://127.0.0.1:${write.port}/s/${m.sessionId}/export.html`, await login(write.url));
          expect(d.status !== 200 || !d.complete, JSON.stringify(d)).toBe(true);
        } finally {
          await write.close();
        }
      } finally {
        await v.close();
      }
    }
  });
});

describe("serve --redact under attack: a secret in a session's cwd", () => {
  it("shows nowhere: list, sessions API, search hits, usage, space and trash", async () => {
    const root = tempDir();
    const cwd = `/work/${SECRET}/proj`;
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: "hello from a secret place", timestamp: 1 });
    m.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "hi" }],
      model: "m1",
      provider: "p",
      api: "a",
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: 2,
    } as never);
    await m.close();
    const gone = await SessionManager.create(cwd, { root });
    gone.appendMessage({ role: "user", content: "removed", timestamp: 1 });
    await gone.close();
    await Lifecycle.open({ root }).rm((await SessionManager.listAll({ root })).find((x) => x.id === gone.sessionId)!);
    const v = await startViewer({ root, sharingView: true });
    try {
      const cookie = await login(v.url);
      const base = `http://127.0.0.1:${v.port}`;
      for (const path of ["/", "/api/sessions", "/api/search?q=hello", `/s/${m.sessionId}`, "/usage", "/trash"]) {
        const a = await http(`${base}${path}`, { cookie });
        expect(a.status, path).toBe(200);
        expect(a.body, path).not.toContain(SECRET.slice(4, 20));
      }
    } finally {
      await v.close();
    }
  });
});

describe("serve under attack: the skeleton and the whole open agree on odd entries", () => {
  it("an entry with an empty id (the load leaves it out) is left out of the page either way", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    m.appendMessage({ role: "user", content: "seed", timestamp: 1 });
    await m.close();
    const id = "0b1e5c0d-0000-7000-8000-00000000e117";
    const path = rawSession(dirname(m.sessionFile!), id, ["A", "B"]);
    // the first entry's id made empty, the second's parent pointing at it
    writeFileSync(path, readFileSync(path, "utf8").replace('"id":"m0"', '"id":""').replace('"parentId":"m0"', '"parentId":""'));
    const store = new ViewerStore({ root });
    const info = (await store.listing()).find((x) => x.id === id)!;
    const page = async (whole: boolean) => {
      const v = await openSessionView(store, info, { redact: false, whole });
      try {
        return sessionHtml(v, null, [], "");
      } finally {
        await v.close();
      }
    };
    expect(await page(false)).toBe(await page(true));
  });
});

describe("serve under attack: a live page whose branch is left behind", () => {
  it("is told to reload when the writer continues on another branch, never sent that branch's tail as if it followed", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    const ids = [1, 2, 3, 4, 5].map((i) => m.appendMessage({ role: "user", content: `message ${i}`, timestamp: i }));
    await m.close();
    const v = await startViewer({ root });
    try {
      const cookie = await login(v.url);
      const base = `http://127.0.0.1:${v.port}`;
      const page = await http(`${base}/s/${m.sessionId}`, { cookie });
      const live = /data-live="([^"]+)"/.exec(page.body)![1]!.replace(/&#38;/g, "&");
      let opened!: () => void;
      const open = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const first = new Promise<string>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: v.port, path: live, headers: { Cookie: cookie } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
            if (text.startsWith(": live")) opened();
            const event = /^event: (\w+)$/m.exec(text);
            if (event !== null) {
              resolve(event[1]!);
              req.destroy();
            }
          });
        });
        req.on("error", reject);
        req.end();
      });
      await open;
      // the writer goes back to message 2 and writes a longer branch from there
      const w = await SessionManager.open(m.sessionFile!, { root });
      w.branch(ids[1]!);
      for (let i = 6; i <= 10; i++) w.appendMessage({ role: "user", content: `other ${i}`, timestamp: i });
      await w.close();
      expect(await first).toBe("reload");
    } finally {
      await v.close();
    }
  });
});

describe("serve under attack: the commands a page suggests", () => {
  it("quote a hostile session or entry id for the shell: copying the line runs nothing else", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/attack", { root });
    m.appendMessage({ role: "user", content: "seed", timestamp: 1 });
    await m.close();
    const id = "0b1e5c0d-0000-7000-8000-00000000c0de";
    const path = rawSession(dirname(m.sessionFile!), id, ["A", "B"]);
    const evil = "x; touch /tmp/pwned #";
    writeFileSync(path, readFileSync(path, "utf8").replaceAll('"m1"', JSON.stringify(evil)));
    const v = await startViewer({ root });
    try {
      const cookie = await login(v.url);
      const page = (await http(`http://127.0.0.1:${v.port}/s/${id}`, { cookie })).body;
      const commands = [...page.matchAll(/<code[^>]*>(transcript-store fork [^<]*)<\/code>/g)].map((x) =>
        x[1]!.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))),
      );
      expect(commands).toContain(`transcript-store fork ${id} --at 'x; touch /tmp/pwned #'`);
      for (const c of commands) expect(c, c).not.toMatch(/--at x;/);
    } finally {
      await v.close();
    }
  });
});
