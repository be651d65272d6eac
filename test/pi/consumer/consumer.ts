// A strict TypeScript consumer of pi 1.5.2's SDK handing it the facade (compiled on its own by
// test/pi/pi-types.test.ts with tsc, against the real @earendil-works/pi-coding-agent types).
import {
  createAgentSession,
  type CreateAgentSessionOptions,
  type SessionManager as PiSessionManager,
} from "@earendil-works/pi-coding-agent";
import { SessionManager } from "../../../src/pi/agent.ts";
import { SessionManager as PlainFacade } from "../../../src/pi/index.ts";

export async function start(cwd: string): Promise<void> {
  const sessionManager = SessionManager.create(cwd, undefined, { blobsDir: "/tmp/blobs" });
  const options: CreateAgentSessionOptions = { cwd, sessionManager };
  const { session } = await createAgentSession(options);
  const back: PiSessionManager = session.sessionManager;
  void back.buildSessionProjection();
  await createAgentSession({ cwd, sessionManager: SessionManager.inMemory(cwd, { id: "mem-1" }) });
  const opened = SessionManager.open(sessionManager.getSessionFile()!);
  const forked = SessionManager.forkFrom(opened.getSessionFile()!, cwd, undefined, { id: "fork-1" });
  for (const info of await SessionManager.list(cwd)) void info.firstMessage;
  forked.close();
  opened.close();
  sessionManager.close();
}

export function plain(cwd: string): CreateAgentSessionOptions {
  // @ts-expect-error TS2740: pi's class has private fields, so the plain facade class is refused; transcript-store/pi/agent is accepted.
  return { cwd, sessionManager: PlainFacade.create(cwd) };
}
