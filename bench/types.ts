/** Settings every scenario receives from the runner. */
export interface BenchContext {
  /** Bytes for size-driven workloads (open, migrate). */
  sizeBytes: number;
  /** Measured repetitions (medians are reported). */
  repeats: number;
  quick: boolean;
  /** `--corpus 10k`: the index bench on the 10,000 sessions (about 2 GB) instead of `--size`. */
  corpus?: string;
  /** `--store postgres`: the server the PostgreSQL scenarios use (each makes its own database on it). */
  pgUrl?: string;
  /** `--list-sessions <n>`: sessions of the list-index scenario. @default 2000 */
  listSessions?: number;
}

/** One line of the results table. */
export interface BenchRow {
  scenario: string;
  unit: string;
  ours: number;
  baseline: number | null;
  baselineName: string;
  /** ours relative to the baseline, in the direction of the target (time ratio or throughput ratio). */
  ratio: number | null;
  target: string;
  met: boolean | null;
  extra?: Record<string, number | string>;
}
