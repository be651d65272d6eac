import { join } from "node:path";
import { listEntries, readHeadGuarded, regularFileSize } from "../artifacts/artifact-files.ts";
import { agentOutputFileName, isAgentOutputId, isArtifactId } from "../artifacts/artifact-names.ts";
import { artifactsDirOf } from "../session/paths.ts";
import type { EntryText } from "./entry-text.ts";

/**
 * Bytes of one spilled tool output (artifact) indexed: the whole of it up to this bound, the bound of
 * a session line (`MAX_INDEXED_LINE_BYTES`); only a larger output's rest is not searchable. @default 16 MiB
 */
export const MAX_ARTIFACT_BYTES = 16 << 20;

/** Reads a session's spilled tool outputs (`<id>.<tool>.log` in its artifacts directory), each up to `MAX_ARTIFACT_BYTES`. */
export class ArtifactReader {
  private names: string[] | null = null;

  constructor(private readonly sessionPath: string) {}

  /** The text with each artifact it points to appended (bytes read added to `counter`). */
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

  /** The output an `artifact://<n>` or `agent://<id>` URL names (up to `MAX_ARTIFACT_BYTES`), or null (absent, unsafe, no such id). */
  read(url: string): { text: string; bytes: number } | null {
    const dir = artifactsDirOf(this.sessionPath);
    this.names ??= listEntries(dir)
      .filter((e) => e.isFile() && (e.name.endsWith(".log") || e.name.endsWith(".md")))
      .map((e) => e.name);
    const name = this.fileOf(url);
    if (name === undefined) return null;
    const path = join(dir, name);
    const head = readHeadGuarded(path, Math.min(MAX_ARTIFACT_BYTES, Math.max(0, regularFileSize(path) ?? 0)));
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
