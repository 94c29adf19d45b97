// Encoding workers: OTLP trace exports decoded, mapped and encoded as `spans` rows on worker
// threads (INGEST_WORKERS), so the thread that serves requests and assembles traces spends
// nothing per span on them. A request goes to the worker with the fewest waiting; its answer is
// the same as encoding on the request's thread (span-encoding.ts). A worker that dies fails its
// waiting requests with a 503 (nothing of them was written) and is started again.
import { Worker } from 'node:worker_threads';
import { badRequest, unavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ColumnDef } from '../stores/row-binary.ts';
import type { EncodedSpans, SpanEncodingOptions, TraceBody } from './span-encoding.ts';

export interface EncodeWorkerData {
  entry: string;
  /** The `spans` table's insertable columns, in order. */
  columns: ColumnDef[];
}

export interface EncodeRequest {
  id: number;
  projectId: string;
  body: TraceBody;
  receivedAt: string;
  opts: SpanEncodingOptions;
}

export type EncodeReply =
  { id: number; encoded: EncodedSpans; error?: undefined } | { id: number; error: { invalid: boolean; message: string } };

export interface EncodePool {
  readonly size: number;
  /** The worker threads now running (for diagnostics and tests). */
  workers(): readonly Worker[];
  encode(projectId: string, body: TraceBody, receivedAt: string, opts?: SpanEncodingOptions): Promise<EncodedSpans>;
  close(): Promise<void>;
}

interface Waiting {
  resolve(e: EncodedSpans): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  waiting: Map<number, Waiting>;
}

export function createEncodePool(opts: { size: number; columns: ColumnDef[]; logger: Logger }): EncodePool {
  const entry = new URL('./encode-worker.ts', import.meta.url).href;
  const slots: Slot[] = [];
  let nextId = 0;
  let closing = false;

  function start(i: number): void {
    const worker = new Worker(new URL('./encode-worker.mjs', import.meta.url), {
      workerData: { entry, columns: opts.columns } satisfies EncodeWorkerData,
    });
    const slot: Slot = { worker, waiting: new Map() };
    slots[i] = slot;
    worker.on('message', (reply: EncodeReply) => {
      const w = slot.waiting.get(reply.id);
      if (!w) return;
      slot.waiting.delete(reply.id);
      if (reply.error === undefined) w.resolve(reply.encoded);
      else w.reject(reply.error.invalid ? badRequest(reply.error.message) : new Error(reply.error.message));
    });
    let down = false;
    const failed = (why: string) => {
      if (down) return; // 'error' is followed by 'exit'
      down = true;
      for (const w of slot.waiting.values()) w.reject(unavailable(`The spans could not be encoded (${why}); retry`, 1));
      slot.waiting.clear();
      if (slots[i] === slot && !closing) {
        opts.logger.error({ worker: i, why }, 'ingest encoding worker stopped; starting another');
        start(i);
      }
    };
    worker.on('error', (err) => failed(err.message));
    worker.on('exit', (code) => failed(`exit ${code}`));
  }
  for (let i = 0; i < opts.size; i++) start(i);

  return {
    size: opts.size,
    workers: () => slots.map((s) => s.worker),
    encode(projectId, body, receivedAt, opts = {}) {
      // A worker that was terminated would never answer: after close, nothing is sent to one.
      if (closing) return Promise.reject(unavailable('The service is shutting down; retry', 1));
      let slot = slots[0]!;
      for (const s of slots) if (s.waiting.size < slot.waiting.size) slot = s;
      const id = ++nextId;
      return new Promise<EncodedSpans>((resolve, reject) => {
        slot.waiting.set(id, { resolve, reject });
        slot.worker.postMessage({ id, projectId, body, receivedAt, opts } satisfies EncodeRequest);
      });
    },
    async close() {
      closing = true;
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
