import type { IndexRefreshReport } from "./index-types.ts";

/** A refresh report with every count at zero: what each index (file tree, database) adds to. */
export function emptyRefreshReport(): IndexRefreshReport {
  return {
    filesSeen: 0,
    sessionsAdded: 0,
    sessionsUpdated: 0,
    sessionsReindexed: 0,
    sessionsRemoved: 0,
    entriesIndexed: 0,
    bytesRead: 0,
    headerBytesRead: 0,
    artifactBytesRead: 0,
    malformedLines: 0,
    largeLinesSkipped: 0,
  };
}
