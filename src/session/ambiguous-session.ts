import { TranscriptStoreError } from "../errors.ts";

/** One session an ambiguous id prefix matched: what a person needs to pick it. */
export interface SessionCandidate {
  id: string;
  /** Its title, else the first user message, else null. */
  title: string | null;
  /** When it was last active. */
  modified: Date;
  /** Its file (the file store); absent in a database store. */
  path?: string;
}

/** Candidates named in the message and carried on the error. */
export const MAX_CANDIDATES = 10;

/**
 * `SESSION_AMBIGUOUS` for a prefix that matches several sessions. The message's first line says
 * how many; each candidate follows on its own line (id, time, title), as git lists the objects a
 * short SHA matches. `candidates` holds them for a caller that prints them itself (the CLI).
 */
export class SessionAmbiguousError extends TranscriptStoreError {
  readonly candidates: SessionCandidate[];

  constructor(needle: string, matched: SessionCandidate[], more = false) {
    const shown = matched.slice(0, MAX_CANDIDATES);
    const count = more || matched.length > shown.length ? `more than ${shown.length}` : String(matched.length);
    const lines = shown.map((c) => `  ${candidateLine(c)}`);
    super("SESSION_AMBIGUOUS", [`${JSON.stringify(needle)} matches ${count} sessions; give more of the id:`, ...lines].join("\n"));
    this.candidates = shown;
  }
}

/** `<id>  <YYYY-MM-DD HH:MM>  <title>`: one candidate's line (the time in UTC). */
export function candidateLine(c: SessionCandidate): string {
  const time = Number.isNaN(c.modified.getTime()) ? "-" : c.modified.toISOString().slice(0, 16).replace("T", " ");
  return `${c.id}  ${time}  ${c.title ?? "(untitled)"}`;
}
