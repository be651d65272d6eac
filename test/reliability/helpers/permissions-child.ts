// `permissions-child.ts <root>`: run as a user the permission bits bind (not root). Changes the
// permissions of its own store's directories and files mid-operation and prints, as JSON, what each
// step did: { step, ok } or { step, code } (the error's code, or "UNCODED: <message>").
import { chmodSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { dirname, join } from "node:path";
import { TranscriptStoreError } from "../../../src/errors.ts";
import { collectGarbage } from "../../../src/maintenance/gc.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { makePng } from "../../support/png.ts";

const [root] = process.argv.slice(2) as [string];
const results: Array<{ step: string; ok?: true; code?: string; warnings: string[] }> = [];
let warnings: string[] = [];
const png = (seed: number) => makePng(32, 32, seed).toString("base64");

async function step(name: string, run: () => unknown): Promise<void> {
  warnings = [];
  try {
    await run();
    results.push({ step: name, ok: true, warnings });
  } catch (err) {
    const code = err instanceof TranscriptStoreError ? err.code : `UNCODED: ${(err as Error).message}`;
    results.push({ step: name, code, warnings });
  }
}

const options = { root, onWarning: (w: { code: string }) => warnings.push(w.code) };
const a = await SessionManager.create(join(root, "p"), options);
a.appendMessage({ role: "user", content: "a1" });
const bucket = dirname(a.sessionFile!);

// A bucket made read-only while a session in it is held: the held session keeps appending, a new one is refused.
chmodSync(bucket, 0o500);
await step("bucket read-only: append to the held session", () => a.appendMessage({ role: "user", content: "a2" }));
await step("bucket read-only: new session in it", async () => {
  const b = await SessionManager.create(join(root, "p"), options);
  b.appendMessage({ role: "user", content: "b1" });
  await b.close();
});
await step("bucket read-only: artifact of the held session", () => a.artifacts!.save("out", { toolType: "bash" }));
await step("bucket read-only: close the held session", () => a.close());
chmodSync(bucket, 0o700);

// The session file made read-only, then unreadable.
const c = await SessionManager.create(join(root, "q"), options);
c.appendMessage({ role: "user", content: "c1" });
await c.close();
chmodSync(c.sessionFile!, 0o400);
await step("file read-only: open writable and append", async () => {
  const again = await SessionManager.open(c.sessionFile!, options);
  try {
    again.appendMessage({ role: "user", content: "c2" });
  } finally {
    await again.close();
  }
});
chmodSync(c.sessionFile!, 0o000);
await step("file unreadable: open read-only", async () =>
  (await SessionManager.open(c.sessionFile!, { ...options, readOnly: true })).close(),
);
await step("file unreadable: open writable", async () => (await SessionManager.open(c.sessionFile!, options)).close());
await step("file unreadable: list", () => SessionManager.list(join(root, "q"), options));
await step("file unreadable: gc", () =>
  collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 }),
);
chmodSync(c.sessionFile!, 0o600);

// The bucket made unreadable (listing) and the artifacts directory made read-only.
const d = await SessionManager.create(join(root, "r"), options);
d.appendMessage({ role: "user", content: "d1" });
d.artifacts!.save("first", { toolType: "bash" });
const artifacts = d.sessionFile!.replace(/\.jsonl$/, "");
chmodSync(artifacts, 0o500);
await step("artifacts read-only: save", () => d.artifacts!.save("second", { toolType: "bash" }));
await step("artifacts read-only: read the first", () => {
  if (d.artifacts!.get("0") !== "first") throw new Error("first artifact not read back");
});
chmodSync(artifacts, 0o700);
// Blobs directory read-only: an image append is refused whole.
d.appendMessage({ role: "user", content: [{ type: "image", data: png(1), mimeType: "image/png" }] });
chmodSync(join(root, "blobs"), 0o500);
await step("blobs read-only: image append", () =>
  d.appendMessage({ role: "user", content: [{ type: "image", data: png(2), mimeType: "image/png" }] }),
);
chmodSync(join(root, "blobs"), 0o700);
await d.close();
const dBucket = dirname(d.sessionFile!);
chmodSync(dBucket, 0o300);
await step("bucket unreadable: list", () => SessionManager.list(join(root, "r"), options));
await step("bucket unreadable: continueRecent", async () => (await SessionManager.continueRecent(join(root, "r"), options)).close());
await step("bucket unreadable: gc", () =>
  collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 }),
);
chmodSync(dBucket, 0o700);

// A lock directory made unwritable while held (its heartbeat and release).
const e = await SessionManager.create(join(root, "s"), options);
e.appendMessage({ role: "user", content: "e1" });
chmodSync(`${e.sessionFile!}.lock`, 0o500);
utimesSync(`${e.sessionFile!}.lock`, new Date(), new Date());
await step("lock dir read-only: append", () => e.appendMessage({ role: "user", content: "e2" }));
await step("lock dir read-only: close", () => e.close());

process.stdout.write(
  JSON.stringify({
    results,
    blobs: readdirSync(join(root, "blobs")).filter((n) => !n.startsWith(".")),
    files: {
      a: readFileSync(a.sessionFile!, "utf8"),
      c: readFileSync(c.sessionFile!, "utf8"),
      d: readFileSync(d.sessionFile!, "utf8"),
      e: readFileSync(e.sessionFile!, "utf8"),
    },
  }),
);
