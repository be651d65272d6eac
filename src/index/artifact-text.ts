import { join } from "node:path";
import { listEntries, readHeadGuarded } from "../artifacts/artifact-files.ts";
import { agentOutputFileName, isAgentOutputId, isArtifactId } from "../artifacts/artifact-names.ts";
import { artifactsDirOf } from "../session/paths.ts";
import type { EntryText } from "./entry-text.ts";

/** Bytes read from the head of one spilled tool output (artifact) to index it. @default 65536 */
export const MAX_ARTIFACT_BYTES = 64 * 1024;

/** Reads the head of a session's spilled tool outputs (`<id>.<tool>.log` in its artifacts directory), bounded. */
export class ArtifactReader {
  private names: string[] | null = null;

  constructor(private readonly sessionPath: string) {}

  /** The text with the head of each artifact it points to appended (bytes read added to `counter`). */
  withArtifacts(text: EntryText, counter: { artifactBytesRead: number }): string {
    let body = text.text;
    for (const url of text.artifacts) {
      const content = this.read(url);
      if (content === null) continue;
      counter.artifactBytesRead += content.bytes;
      body += `\n${content.text}`;
    }
    return body;
  }

  /** The head of the output an `artifact://<n>` or `agent://<id>` URL names, or null (absent, unsafe, no such id). */
  read(url: string): { text: string; bytes: number } | null {
    const dir = artifactsDirOf(this.sessionPath);
    this.names ??= listEntries(dir)
      .filter((e) => e.isFile() && (e.name.endsWith(".log") || e.name.endsWith(".md")))
      .map((e) => e.name);
    const name = this.fileOf(url);
    if (name === undefined) return null;
    const head = readHeadGuarded(join(dir, name), MAX_ARTIFACT_BYTES);
    if (head === null || head === "unsafe") return null;
    return { text: head.toString("utf8"), bytes: head.length };
  }

  private fileOf(url: string): string | undefined {
    const [scheme, id = ""] = url.split("://");
    if (scheme === "artifact" && isArtifactId(id)) {
      const prefix = `${Number(id)}.`; // artifact://007 is artifact 7
      return this.names!.find((n) => n.startsWith(prefix) && n.endsWith(".log"));
    }
    if (scheme === "agent" && isAgentOutputId(id)) {
      const name = agentOutputFileName(id);
      return this.names!.includes(name) ? name : undefined;
    }
    return undefined;
  }
}
