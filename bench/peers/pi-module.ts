import { join } from "node:path";

/** pi's session manager, installed by bench/peers/install.sh into .bench-peers/. */
export const PI_MODULE = join(
  import.meta.dirname,
  "../../.bench-peers/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js",
);
export const PI_VERSION = "0.73.1";
