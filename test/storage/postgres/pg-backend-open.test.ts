import { describe, expect, it, vi } from "vitest";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { PostgresBackend } from "../../../src/storage/postgres/pg-backend.ts";
import { makePng } from "../../support/png.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

// Counts the entries an open walks for blob refs (the walk is the work measured here, not a duration).
const walked = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../../src/session/rehydrate.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../src/session/rehydrate.ts")>();
  return {
    ...original,
    rehydrateValue: (...args: Parameters<typeof original.rehydrateValue>) => {
      walked.count++;
      return original.rehydrateValue(...args);
    },
  };
});

const cluster = pgCluster();

describe.skipIf(!cluster)("PostgresBackend.open (eager)", () => {
  it("walks only the entries whose line names a blob ref, and gives their images back", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    try {
      const image = makePng(8, 8, 3).toString("base64");
      const writer = await SessionManager.create("/project", { store: backend, blobThreshold: 0 }); // the image becomes a ref
      for (let i = 0; i < 50; i++) writer.appendMessage({ role: "user", content: `text ${i}` });
      writer.appendMessage({ role: "user", content: [{ type: "image", data: image, mimeType: "image/png" }] });
      writer.appendMessage({ role: "user", content: "mentions blob:sha256:not-a-ref in prose" });
      await writer.close();

      walked.count = 0;
      const opened = await SessionManager.open(writer.sessionId, { store: backend });
      const entries = opened.getEntries();
      await opened.close();
      expect(entries).toHaveLength(52);
      expect(walked.count).toBe(2); // the image entry and the line that looks like it holds one, not the 50 text entries
      const withImage = entries[50] as unknown as { message: { content: Array<{ data: string }> } };
      expect(withImage.message.content[0]!.data).toBe(image);
    } finally {
      await backend.close();
    }
  });
});
