/**
 * `transcript-store/pi/agent`: the facade's `SessionManager` typed as pi 1.5.2's own class, for
 * pi's SDK (`createAgentSession({ sessionManager })`). pi's class has private fields, so
 * TypeScript accepts only instances declared by that class: the plain facade class is refused
 * (TS2740) though it has every public member. This entry is the same runtime class, declared as
 * pi's (plus the facade's `close()`); the statics keep the facade's extra engine-options argument.
 * It needs `@earendil-works/pi-coding-agent`'s types, which a caller of pi's SDK has. See docs/pi.md.
 */
import type { SessionManager as PiSessionManager } from "@earendil-works/pi-coding-agent";
import { SessionManager as FacadeSessionManager } from "./session-manager.ts";

/** A facade session manager as pi's SDK types it, with the facade's `close()`. */
export type SessionManager = PiSessionManager & { close(): void };

/** A facade static with every facade instance it returns typed as pi's class. */
type AsPi<F> = F extends (...args: infer A) => infer R ? (...args: A) => AsPiResult<R> : F;
type AsPiResult<R> = R extends FacadeSessionManager ? SessionManager : R;

/** The facade's factories (`create`, `open`, `continueRecent`, `inMemory`, `forkFrom`, `findById`, `list`, `listAll`). */
export type SessionManagerStatics = {
  [K in Exclude<keyof typeof FacadeSessionManager, "prototype">]: AsPi<(typeof FacadeSessionManager)[K]>;
};

/** The facade class, declared as pi's (the one place the facade is cast; its callers need none). */
export const SessionManager: SessionManagerStatics = FacadeSessionManager as unknown as SessionManagerStatics;
