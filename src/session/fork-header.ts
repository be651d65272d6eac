import { CURRENT_VERSION, type SessionHeader } from "../format/types.ts";
import { uuidv7 } from "./ids.ts";
import { resolveRecordedCwd } from "./paths.ts";

/**
 * The header of a fork of the session headed by `source`: a new id and timestamp, the fork's cwd,
 * `parentSession` = the source's id, and every other field of the source's header.
 */
export function forkHeader(source: SessionHeader, cwd: string, created: Date): SessionHeader {
  const { type: _t, version: _v, id: _id, timestamp: _ts, cwd: _c, parentSession: _p, ...extra } = source;
  return {
    type: "session",
    version: CURRENT_VERSION,
    id: uuidv7(created.getTime()),
    timestamp: created.toISOString(),
    cwd: resolveRecordedCwd(cwd),
    parentSession: source.id,
    ...extra,
  };
}
