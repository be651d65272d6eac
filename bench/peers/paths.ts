// Where bench/peers/install.sh puts the peers (ignored .bench-peers/, never dependencies of the project).
import { join } from "node:path";

const PEERS = join(import.meta.dirname, "../../.bench-peers");

export const PI_VERSION = "0.73.1";
export const OMP_VERSION = "18.2.3";
export const BUN_VERSION = "1.4.5";

/** pi's session manager (public API: dist/core/session-manager.d.ts). */
export const PI_MODULE = join(PEERS, "pi/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");
/** omp's session manager: the package ships TypeScript sources for Bun (types: dist/types/session/session-manager.d.ts). */
export const OMP_MODULE = join(PEERS, "omp/node_modules/@oh-my-pi/pi-coding-agent/src/session/session-manager.ts");
/** The Bun binary the `bun` npm package installs. */
export const BUN = join(PEERS, "omp/node_modules/bun/bin/bun.exe");
