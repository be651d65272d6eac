import type { StoreWarning } from "../../errors.ts";
import { storeUsage } from "../../maintenance/store-accounting.ts";
import type { UsageGrouping } from "../../accounting/usage-report.ts";
import { redactForSharing } from "../../session/redact-for-sharing.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { sharingRedactorOf } from "../../storage/sharing-key.ts";
import { storeOptions, type Command } from "../context.ts";
import { resolveArg } from "../resolve-session.ts";
import { packageVersion } from "../version.ts";
import { openIndex } from "./search.ts";

export const mcpCommand: Command = {
  name: "mcp",
  readOnly: true,
  summary:
    "serve search, show (an entry in context) and usage as read-only tools of a Model Context Protocol server " +
    "on stdin/stdout, output redacted unless --no-redact",
  usage: "mcp [--no-redact]",
  options: { "no-redact": { type: "boolean", default: false } },
  maxArgs: 0,
  async run(ctx) {
    // stdout is the protocol's: warnings go to stderr only
    const warn = (w: StoreWarning) => ctx.io.stderr(`transcript-store mcp: ${w.code ?? "warning"}: ${w.message}\n`);
    const options = storeOptions(ctx);
    const redactor = await sharingRedactorOf(options.store ?? null, options.root, ctx.values["no-redact"] !== true);
    const { serveMcp } = await import("../../mcp/mcp-server.ts");
    const { closed } = await serveMcp(
      {
        openIndex: () => openIndex(ctx, warn),
        async entries(session) {
          const info = await resolveArg(ctx, session);
          const m = await SessionManager.open(info.path, { ...options, readOnly: true, rehydrate: "lazy", onWarning: warn });
          try {
            return { sessionId: m.sessionId, entries: m.getEntries() };
          } finally {
            await m.close();
          }
        },
        usage: ({ by, since, until }) => storeUsage({ ...options, onWarning: warn, by: by as UsageGrouping | undefined, since, until }),
        redact: (value) => (redactor === null ? value : redactForSharing(value, redactor)),
      },
      packageVersion(),
    );
    await closed; // serves until the client closes stdin
    return 0;
  },
};
