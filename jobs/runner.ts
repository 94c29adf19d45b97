// Background jobs behind one small interface, with two implementations chosen once at boot:
// BullMQ on Redis (REDIS_URL) or an in-process runner. Processors are written once for both.
import type { Logger } from '../src/logger.ts';

export interface JobContext {
  readonly logger: Logger;
  readonly attempt: number;
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
   * Deduplication key: while a job with this key is waiting, delayed or running, another one with
   * the same key is not added (debounce by key). Once it has finished, the key is free again.
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
