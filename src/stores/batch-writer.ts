// The batching writer of one ClickHouse table (the OpenTelemetry batch processor's shape):
// bounded queue (rows and bytes), flush at size or interval, one flush in flight, retries with
// backoff, and a caller learns the fate of its rows: `write` resolves once ClickHouse has
// acknowledged the batch holding them (the durable point), and rejects with 503 + Retry-After
// when the queue is full (before anything is queued) or when the batch could not be stored after
// every retry. Nothing is dropped silently. A retried batch carries the same
// insert_deduplication_token, so an insert whose acknowledgement was lost is not stored twice,
// in the table or in the materialized views fed by it.
import crypto from 'node:crypto';
import type { ClickHouseSettings } from '@clickhouse/client';
import type { Logger } from '../logger.ts';
import { Invalid, PayloadTooLarge, unavailable } from '../errors.ts';
import { isConnectivityError, refusalOf, refusalText, StoreUnavailableError, type WriteRefusal } from './errors.ts';

/** Refusals that a retry within seconds meets again. */
const LASTING_REFUSALS: ReadonlySet<WriteRefusal> = new Set(['disk_full', 'read_only']);

export type InsertFn = (table: string, rows: readonly object[], settings: ClickHouseSettings) => Promise<void>;

export interface BatchWriterOptions {
  table: string;
  maxQueueRows: number;
  maxQueueBytes: number;
  maxBatchRows: number;
  flushIntervalMs: number;
  maxAttempts: number;
  backoffMs: number;
  /** Settings of every insert beside the writer's own. */
  settings?: ClickHouseSettings;
}

interface Pending {
  rows: readonly object[];
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface WriterStats {
  queuedRows: number;
  queuedBytes: number;
  writtenRows: number;
  refusedRows: number;
  failedRows: number;
  batches: number;
  retries: number;
}

const isStoreDown = (err: unknown) => err instanceof StoreUnavailableError || isConnectivityError(err);

/**
 * ClickHouse errors that mean "these values cannot be stored" (parse, type, range, overflow),
 * as opposed to a store that is down or overloaded: retrying them changes nothing.
 */
const DATA_ERROR_CODES = new Set(['6', '26', '27', '32', '38', '41', '53', '69', '70', '72', '117', '131', '321', '407']);
export function isRefusedData(err: unknown): boolean {
  if (!(err instanceof Error) || isStoreDown(err)) return false;
  // The HTTP client carries the ClickHouse code in `code`; the embedded engine's insert in its message.
  const e = err as Error & { code?: unknown; clickhouseCode?: unknown };
  const code =
    e.clickhouseCode !== undefined
      ? String(e.clickhouseCode)
      : /^\d+$/.test(String(e.code))
        ? String(e.code)
        : /\bCode: (\d+)\./.exec(e.message)?.[1];
  return code !== undefined && DATA_ERROR_CODES.has(code);
}

export class BatchWriter {
  private pending: Pending[] = [];
  private pendingRows = 0;
  private queuedRows = 0;
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private closing = false;
  readonly stats: WriterStats = { queuedRows: 0, queuedBytes: 0, writtenRows: 0, refusedRows: 0, failedRows: 0, batches: 0, retries: 0 };

  constructor(
    private readonly insert: InsertFn,
    private readonly opts: BatchWriterOptions,
    private readonly logger: Logger,
  ) {}

  /** Resolves when the rows are stored; rejects with 503 when they cannot be accepted or stored. */
  write(rows: readonly object[], bytes: number): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    if (this.closing) return Promise.reject(unavailable('The service is shutting down; retry', 1));
    if (rows.length > this.opts.maxQueueRows || bytes > this.opts.maxQueueBytes) {
      // It would never fit, however long the client waited: not a 503 to retry.
      this.stats.refusedRows += rows.length;
      return Promise.reject(
        new PayloadTooLarge(
          `The request carries ${rows.length} ${this.opts.table} rows (${bytes} bytes); ` +
            `one request may carry at most ${this.opts.maxQueueRows} rows and ${this.opts.maxQueueBytes} bytes`,
        ),
      );
    }
    if (this.queuedRows + rows.length > this.opts.maxQueueRows || this.queuedBytes + bytes > this.opts.maxQueueBytes) {
      this.stats.refusedRows += rows.length;
      return Promise.reject(unavailable(`The ${this.opts.table} write queue is full; retry later`, 1));
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ rows, bytes, resolve, reject });
      this.pendingRows += rows.length;
      this.queuedRows += rows.length;
      this.queuedBytes += bytes;
      this.syncStats();
      if (this.pendingRows >= this.opts.maxBatchRows) this.kick();
      else this.scheduleFlush();
    });
  }

  /** Writes everything queued so far. */
  async flush(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight) {
      this.kick();
      await this.inFlight;
    }
  }

  /** Stops accepting, writes what is queued. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private syncStats(): void {
    this.stats.queuedRows = this.queuedRows;
    this.stats.queuedBytes = this.queuedBytes;
  }

  /** Flushes after the interval unless a timer is already set. */
  private scheduleFlush(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.opts.flushIntervalMs);
    this.timer.unref();
  }

  /** Starts a flush unless one is in flight (one at a time; the next starts when it ends). */
  private kick(): void {
    if (this.inFlight || this.pending.length === 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight = this.flushBatch().finally(() => {
      this.inFlight = undefined;
      if (this.pending.length > 0) {
        if (this.pendingRows >= this.opts.maxBatchRows || this.closing) this.kick();
        else this.scheduleFlush();
      }
    });
  }

  private async flushBatch(): Promise<void> {
    const batch: Pending[] = [];
    let rows = 0;
    while (this.pending.length > 0 && (rows === 0 || rows + this.pending[0]!.rows.length <= this.opts.maxBatchRows)) {
      const p = this.pending.shift()!;
      batch.push(p);
      rows += p.rows.length;
    }
    this.pendingRows -= rows;
    const bytes = batch.reduce((n, p) => n + p.bytes, 0);
    const error = await this.insertWithRetries(
      batch.flatMap((p) => p.rows),
      rows,
      this.opts.maxAttempts,
    );
    if (error !== undefined && !isStoreDown(error) && batch.length > 1) {
      // Not a store that is down: one caller's rows may be what the store refuses. Each caller's
      // rows are tried alone (once: the batch was retried already), so only those fail.
      this.logger.warn(
        { table: this.opts.table, rows, callers: batch.length, err: { message: (error as Error).message } },
        "batch refused; storing each caller's rows alone",
      );
      for (const p of batch) this.settle([p], await this.insertWithRetries(p.rows, p.rows.length, 1));
    } else {
      this.settle(batch, error);
    }
    this.queuedRows -= rows;
    this.queuedBytes -= bytes;
    this.syncStats();
  }

  /** Inserts rows, retrying store failures with backoff under one deduplication token; the last error, or undefined once stored. */
  private async insertWithRetries(values: readonly object[], rows: number, attempts: number): Promise<unknown> {
    const token = crypto.randomUUID(); // the same for every attempt of these rows
    let error: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await this.insert(this.opts.table, values, {
          insert_deduplication_token: token,
          deduplicate_blocks_in_dependent_materialized_views: 1,
          // Spans of one request may fall in many months (partitions); refusing them would fail the request for nothing.
          max_partitions_per_insert_block: '1000',
          ...this.opts.settings,
        });
        return undefined;
      } catch (err) {
        error = err;
        // Values the store refuses are refused again, and so is a write to a full or read-only
        // disk in the next seconds: not worth a retry (the caller hears at once; 503).
        if (isRefusedData(err) || LASTING_REFUSALS.has(refusalOf(err)!)) return error;
        if (attempt < attempts) {
          this.stats.retries++;
          this.logger.warn(
            { table: this.opts.table, rows, attempt, err: { message: (err as Error).message } },
            'batch insert failed, retrying',
          );
          await new Promise((r) => setTimeout(r, this.opts.backoffMs * 2 ** (attempt - 1)));
        }
      }
    }
    return error;
  }

  private settle(batch: Pending[], error: unknown): void {
    const rows = batch.reduce((n, p) => n + p.rows.length, 0);
    this.stats.batches++;
    if (error === undefined) {
      this.stats.writtenRows += rows;
      for (const p of batch) p.resolve();
      return;
    }
    this.stats.failedRows += rows;
    this.logger.error(
      { table: this.opts.table, rows, err: { message: (error as Error).message } },
      'rows not stored: callers get an error',
    );
    const refused = isRefusedData(error)
      ? new Invalid(
          `The ${this.opts.table} rows could not be stored: the store refused their values ` +
            '(see the service log, request id in X-Request-Id)',
          'unprocessable',
        )
      : unavailable(
          `The ${this.opts.table} rows could not be stored${error instanceof StoreUnavailableError && error.refusal ? ` (${refusalText(error.store, error.refusal)})` : ''}; retry later`,
        );
    for (const p of batch) p.reject(refused);
  }
}
