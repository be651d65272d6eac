import { TranscriptStoreError } from "../../errors.ts";
import type { PgLeases } from "./db/index.ts";

/**
 * Keeps one session's lease: renews it every third of its period while started, and tells whether
 * this process renewed it within the period (past that, a taker may hold it). A renewal the
 * database refuses (taken over, or the session gone) is reported once through `refused`; a lost
 * connection is retried at the next tick.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private renewed = Date.now();

  constructor(
    private readonly leases: PgLeases,
    private readonly sessionId: string,
    private readonly ttlMs: number,
    private readonly refused: (err: TranscriptStoreError) => void,
  ) {}

  /** Renews `token`'s lease until `stop()` (a lease just taken counts as renewed now). */
  start(token: number): void {
    this.stop();
    this.renewed = Date.now();
    this.timer = setInterval(() => this.renew(token), Math.max(250, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** This process renewed (or took) the lease less than one lease period ago. */
  get fresh(): boolean {
    return Date.now() - this.renewed <= this.ttlMs;
  }

  private renew(token: number): void {
    const started = Date.now();
    this.leases.renew(this.sessionId, token, this.ttlMs).then(
      () => {
        this.renewed = started;
      },
      (err) => {
        if (err instanceof TranscriptStoreError && (err.code === "SESSION_LOCKED" || err.code === "SESSION_NOT_FOUND")) {
          this.stop();
          this.refused(err);
        }
      },
    );
  }
}
