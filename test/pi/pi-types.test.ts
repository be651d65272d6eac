import { describe, expect, it } from "vitest";
import type * as Pi from "@mariozechner/pi-coding-agent";
import type * as Facade from "../../src/pi/index.ts";

// Compile-time checks (npm test type-checks test/): values of pi's types are accepted where the
// facade takes them, and what the facade returns is accepted where pi's types are expected.
type Accepts<T, U extends T> = U;
export type HeaderBothWays = [Accepts<Pi.SessionHeader, Facade.SessionHeader>, Accepts<Facade.SessionHeader, Pi.SessionHeader>];
export type InfoBothWays = [Accepts<Pi.SessionInfo, Facade.SessionInfo>, Accepts<Facade.SessionInfo, Pi.SessionInfo>];
export type EntryIntoFacade = Accepts<Facade.SessionEntry, Pi.SessionEntry>;
export type FileEntryIntoFacade = Accepts<Facade.FileEntry, Pi.FileEntry>;
export type CompactionBothWays = [Accepts<Pi.CompactionEntry, Facade.CompactionEntry>, Accepts<Facade.CompactionEntry, Pi.CompactionEntry>];
export type NewSessionBothWays = [
  Accepts<Pi.NewSessionOptions, Facade.NewSessionOptions>,
  Accepts<Facade.NewSessionOptions, Pi.NewSessionOptions>,
];

/** A pi call site, unchanged, against the facade's class. */
function piCallSite(sm: Facade.SessionManager, entries: Pi.SessionEntry[], message: Pi.SessionMessageEntry["message"]): void {
  sm.appendMessage(message);
  for (const entry of entries)
    if (entry.type === "custom_message") sm.appendCustomMessageEntry(entry.customType, entry.content, entry.display, entry.details);
  sm.appendModelChange("provider", "model");
  const ctx: Facade.SessionContext = sm.buildSessionContext();
  void ctx;
  void entries;
}

describe("pi's types", () => {
  it("type-check against the facade's (see the compile-time checks above)", () => {
    expect(typeof piCallSite).toBe("function");
  });
});
