// Stand-in for `@oh-my-pi/pi-utils/fs-open`, which omp 18.3.4's session storage imports but no published pi-utils
// has (the newest, 18.2.9, predates it). install.sh copies this file into the pinned pi-utils when it lacks the module.
// The one function omp calls opens a file descriptor that is not inherited by child processes; Node and Bun already
// open every descriptor with O_CLOEXEC on Linux, so a plain open gives the same descriptor.
import { openSync } from "node:fs";

export function openCloexecSync(path: string, flags: number, mode = 0o666): number {
  return openSync(path, flags, mode);
}
