// Where bench/peers/install.sh puts the peers (ignored .bench-peers/, never dependencies of the project).
import { join } from "node:path";

const PEERS = join(import.meta.dirname, "../../.bench-peers");

export const PI_VERSION = "1.5.2";
export const OMP_VERSION = "18.3.4";
export const BUN_VERSION = "1.4.5";

/** pi's session manager, the project's dev dependency (public API: dist/core/session-manager.d.ts). */
export const PI_MODULE = join(import.meta.dirname, "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");
/** omp's session manager: the package ships TypeScript sources for Bun (types: dist/types/session/session-manager.d.ts). */
export const OMP_MODULE = join(PEERS, "omp/node_modules/@oh-my-pi/pi-coding-agent/src/session/session-manager.ts");
/** omp's directory helpers (getBlobsDir: where omp's blob store lives under the child's HOME). */
export const OMP_UTILS = join(PEERS, "omp/node_modules/@oh-my-pi/pi-utils/src/dirs.ts");
/** The Bun binary the `bun` npm package installs. */
export const BUN = join(PEERS, "omp/node_modules/bun/bin/bun.exe");
