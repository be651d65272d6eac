import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** Who holds a lease: host, process and a random tag (two managers of one process differ). */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}
