// Background jobs behind one small interface, with two implementations chosen once at boot:
// BullMQ on Redis (REDIS_URL) or an in-process runner. Processors are written once for both.
import type { Logger } from '../logger.ts';

export interface JobContext {
  readonly logger: Logger;
  readonly attempt: number;
  /** Aborted when the runner closes: a long job (an experiment) stops taking new work and returns. */
  readonly signal: AbortSignal;
}

export interface JobProcessor<T = unknown> {
  readonly name: string;
  process(data: T, ctx: JobContext): Promise<void>;
  /** Attempts before a job is recorded as failed (default 3), with exponential backoff from backoffMs (default 1000). */
  readonly attempts?: number;
  readonly backoffMs?: number;
  /** Jobs of this processor run at once on one worker (default 1) */
  readonly concurrency?: number;
}

export interface EnqueueOptions {
  /**
   * Deduplication key (debounce by key). While a job with this key is waiting or delayed, another
   * one with the same key is not added: the waiting one will read the same stores. Once it has
   * started running (retries and their backoff included), another enqueue with the key is kept —
   * the latest data only — and runs once the running one has finished (never alongside it). So a
   * change made while its job runs (a retention correction, spend ingested during a budget
   * evaluation) is always followed by one more run, and at most one running plus one waiting job
   * exist per key. In-process: the runner's key states; BullMQ: deduplication with
   * `keepLastIfActive` (which keeps the key while the job is in retry backoff too: that job runs
   * again anyway).
   */
  jobId?: string;
  delayMs?: number;
}

export interface JobRunner {
  readonly mode: 'in-process' | 'bullmq';
  /** Enqueue a job for a registered processor. */
  enqueue<T>(name: string, data: T, opts?: EnqueueOptions): Promise<void>;
  /** Add processors after the runner was built (the domain they call needs the runner to enqueue). */
  register(processors: readonly JobProcessor[]): void;
  /** Run a processor every `intervalMs` (one schedule per name, whatever the number of nodes). */
  every<T>(name: string, intervalMs: number, data: T): Promise<void>;
  /** Stop taking jobs, wait for the running ones, release connections. */
  close(): Promise<void>;
}

export function backoffDelay(baseMs: number, attempt: number): number {
  return baseMs * 2 ** (attempt - 1);
}
