// The loader: drains the ingest log into ClickHouse in large batches, one binary insert per batch
// whatever the size of the requests behind it, then gets the batch's traces assembled. A trace
// whose root and generative-AI spans all came in this batch, and of which nothing was stored
// before, is assembled from the batch's own spans, decoded from the records' RowBinary payloads
// record by record while it is settled (no read-back, nothing kept in memory beside the payloads
// while records wait, and a batch's spans never all alive at once); records' headers say which
// traces qualify, so grouping a batch decodes nothing. Every other
// trace is marked for the assembly job, which reads its spans back. Only then is the batch marked loaded in the log;
// a failure leaves it there to be tried again (and after a crash, replayed), and loading twice
// changes nothing that counts: spans are deduplicated by every reader, and an execution that
// exists is only ever corrected by the read-back path, never written again. A failure that is not
// the store's (it answers, and the error is not one of a store in trouble) is isolated: the batch
// is split until the records that fail alone are found, the others are loaded, and each of those
// is set aside as a dead letter after DEAD_LETTER_ATTEMPTS tries (docs/traces.md, "Dead letters").
import type { Logger } from '../logger.ts';
import { nextTurn } from '../event-loop.ts';
import type { LogRecord, WriteAheadLog } from '../stores/write-ahead-log.ts';
import type { DeadLetters } from '../stores/dead-letters.ts';
import { isTransientStoreError } from '../stores/errors.ts';
import type { Lease, PendingTraces, TraceRef } from './assembly/pending.ts';
import type { StoredSpan } from '../executions/span-rows.ts';
import type { Metrics } from '../metrics.ts';
import type { RowDecoder } from '../stores/row-binary-decoder.ts';
import { createLogConsumer } from '../stores/log-consumer.ts';

/** What a record of the ingest log says of itself (on disk). */
export interface IngestRecordHeader {
  /** Project. */
  p: string;
  /** Rows (spans) in the payload. */
  n: number;
  /** Trace ids of the record's spans. */
  t: string[];
  /**
   * For each trace of `t`, what the record holds of it: bit 1 a generative-AI span, bit 2 its root
   * span (absent in records written before it was kept: their spans are read for it).
   */
  f?: number[];
  /** Columns of `spans` the payload was encoded with (absent in records written before it was kept). */
  c?: number;
}

export type IngestLog = WriteAheadLog<IngestRecordHeader>;
export type IngestDeadLetters = DeadLetters<IngestRecordHeader>;
type IngestRecord = LogRecord<IngestRecordHeader>;

/** Tries of a record alone, failing while the stores answer, before it is set aside. */
export const DEAD_LETTER_ATTEMPTS = 3;

const GEN_AI = 1;
const ROOT = 2;
/** A record's `f`: what it holds of each of its traces. */
export function traceFlags(e: { genAi: readonly boolean[]; roots: readonly boolean[] }): number[] {
  return e.genAi.map((g, i) => (g ? GEN_AI : 0) | (e.roots[i] ? ROOT : 0));
}

export interface SpanLoaderDeps {
  log: IngestLog;
  /**
   * Inserts the payloads' RowBinary rows into `spans` (one insert; the token makes a retry of the
   * same batch a no-op), encoded with `columns` columns (undefined: a record from before the count was kept).
   */
  insertSpans(payloads: Buffer[], dedupToken: string, columns: number | undefined): Promise<void>;
  /** Of these traces, the ones with spans or an execution already stored. */
  /** The decoder of payloads encoded with `columns` columns of `spans`, reading the StoredSpan columns. */
  spanDecoder(columns: number): Promise<RowDecoder>;
  knownTraces(projectId: string, traceIds: string[]): Promise<Set<string>>;
  /**
   * Writes the executions of traces whose every span is at hand, as `traces` yields them; returns
   * the traces it did not write (to be read back).
   */
  assembleFresh(projectId: string, traces: AsyncIterable<[string, StoredSpan[]]>, dedupToken: string): Promise<string[]>;
  pending: Pick<PendingTraces, 'mark' | 'lockFresh' | 'finish'>;
  /** Where records that fail alone are set aside. */
  deadLetters: IngestDeadLetters;
  /** Whether the stores a load writes to answer now (a failure while they do is the records'). */
  storesAnswer(): Promise<boolean>;
  wake(dueAt: number): Promise<void>;
  debounceMs: number;
  /** Bytes of log records loaded in one batch at most. */
  maxBatchBytes: number;
  /** A batch starts once this many rows wait, or the oldest has waited `flushMs`. */
  batchRows: number;
  flushMs: number;
  metrics: Pick<Metrics, 'rowsWritten' | 'executionsAssembled' | 'loadFailures' | 'deadLettered'>;
  logger: Logger;
  now?: () => number;
}

export interface LoaderStats {
  loadedRecords: number;
  loadedRows: number;
  batches: number;
  failures: number;
  /** Records set aside as dead letters. */
  deadLettered: number;
  assembledFresh: number;
  markedForReadBack: number;
  /**
   * Time spent in each step of loading (ms): grouping the batch's traces from the records'
   * headers, the fresh-trace check, the spans insert, settling (decoding the fresh traces' spans,
   * assembly, executions insert, marks).
   */
  phaseMs: { group: number; known: number; spans: number; assemble: number };
}

interface TraceInBatch {
  /** Every record of the batch holding this trace could be decoded. */
  complete: boolean;
  root: boolean;
  genAi: boolean;
  /** The last record of the batch holding spans of it (its index). */
  last: number;
}

export function createSpanLoader(deps: SpanLoaderDeps) {
  const now = deps.now ?? Date.now;
  const stats: LoaderStats = {
    loadedRecords: 0,
    loadedRows: 0,
    batches: 0,
    failures: 0,
    deadLettered: 0,
    assembledFresh: 0,
    markedForReadBack: 0,
    phaseMs: { group: 0, known: 0, spans: 0, assemble: 0 },
  };
  // Batches go through two stages, pipelined (stores/log-consumer.ts): while batch N is settled
  // (assembly in JavaScript, then the executions insert), batch N+1 is decoded and its spans stored
  // by the engine. Stages stay in order: N+1's fresh-trace check runs after N's spans are stored,
  // and N+1 is settled (marked loaded) only after N. A batch whose settling fails is recovered
  // (tried again, or split) before the next is settled; one whose spans could not be stored is
  // recovered before the next is taken, so the next one's fresh-trace check still comes after its
  // spans are stored.
  const consumer = createLogConsumer<IngestRecordHeader, StoredBatch>({
    log: deps.log,
    take: () => deps.log.take(deps.maxBatchBytes, deps.batchRows, deps.flushMs),
    first: store,
    second: (_records, stored) => settle(stored),
    recover,
    maxInFlight: 2,
    sequentialFirsts: true,
    loaded: () => deps.log.queued === 0 && deps.log.pendingBytes === 0,
    what: 'ingest',
    logger: deps.logger,
  });

  const decoders = new Map<number, Promise<RowDecoder>>();
  /** The decoder of a record's payload; undefined for a record encoded before a column assembly reads was added. */
  async function decoderOf(r: IngestRecord): Promise<RowDecoder | undefined> {
    if (r.header.c === undefined) return undefined;
    let d = decoders.get(r.header.c);
    if (!d) {
      decoders.set(r.header.c, (d = deps.spanDecoder(r.header.c)));
      d.catch(() => decoders.delete(r.header.c!));
    }
    const decoder = await d;
    return decoder.missing.length > 0 ? undefined : decoder;
  }

  /**
   * The batch's traces, by project, from the records' headers: what each holds (root,
   * generative-AI span) and its last record. Spans are decoded only for a record written before
   * headers said what it holds.
   */
  async function group(records: IngestRecord[]): Promise<Map<string, Map<string, TraceInBatch>>> {
    const byProject = new Map<string, Map<string, TraceInBatch>>();
    let decoded = 0;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      let traces = byProject.get(r.header.p);
      if (!traces) byProject.set(r.header.p, (traces = new Map()));
      const decoder = await decoderOf(r);
      let flags = r.header.f;
      if (decoder && !flags) {
        if (decoded >= 1024) {
          decoded = 0;
          await nextTurn(); // thousands of spans: requests get their turn
        }
        decoded += r.header.n;
        const of = new Map<string, number>();
        for (const s of decoder.decode(r.payload!) as unknown as StoredSpan[])
          of.set(s.trace_id, (of.get(s.trace_id) ?? 0) | (s.span_class === 'inference' ? GEN_AI : 0) | (s.parent_span_id ? 0 : ROOT));
        flags = r.header.t.map((id) => of.get(id) ?? 0);
      }
      r.header.t.forEach((id, j) => {
        let t = traces.get(id);
        if (!t) traces.set(id, (t = { complete: true, root: false, genAi: false, last: i }));
        t.last = i;
        if (!decoder) t.complete = false;
        else {
          if (flags![j]! & ROOT) t.root = true;
          if (flags![j]! & GEN_AI) t.genAi = true;
        }
      });
    }
    return byProject;
  }

  /**
   * The spans of a project's traces `ids`, trace by trace, each as soon as the last record holding
   * spans of it is decoded: a batch's spans are not all kept at once, so they die young (the
   * collector promotes none of them). `yielded` receives each trace given.
   */
  async function* freshSpans(
    records: IngestRecord[],
    projectId: string,
    traces: Map<string, TraceInBatch>,
    ids: ReadonlySet<string>,
    yielded: Set<string>,
  ): AsyncGenerator<[string, StoredSpan[]]> {
    const open = new Map<string, StoredSpan[]>();
    let decoded = 0;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      if (r.header.p !== projectId || !r.header.t.some((id) => ids.has(id))) continue;
      if (decoded >= 1024) {
        decoded = 0;
        await nextTurn(); // a batch holds thousands of spans: requests get their turn
      }
      decoded += r.header.n;
      const decoder = (await decoderOf(r))!; // a fresh trace's records are all readable
      for (const s of decoder.decode(r.payload!) as unknown as StoredSpan[]) {
        if (!ids.has(s.trace_id)) continue;
        const spans = open.get(s.trace_id);
        if (spans) spans.push(s);
        else open.set(s.trace_id, [s]);
      }
      for (const id of r.header.t) {
        const spans = open.get(id);
        if (!spans || traces.get(id)!.last !== i) continue;
        open.delete(id);
        yielded.add(id);
        yield [id, spans];
      }
    }
  }

  /** A batch whose spans are stored: what settling it needs. */
  interface StoredBatch {
    records: IngestRecord[];
    token: string;
    byProject: Map<string, Map<string, TraceInBatch>>;
    /** Per project, the traces of the batch of which nothing was stored before it. */
    fresh: Map<string, string[]>;
  }

  /** Adds the time since `t0` to a phase's total; returns now. */
  function timed(phase: keyof LoaderStats['phaseMs'], t0: number): number {
    const t = performance.now();
    stats.phaseMs[phase] += t - t0;
    return t;
  }

  /**
   * A batch's first stage: its traces grouped (from the records' headers), its fresh traces
   * found, its spans stored. Throws (to be retried) on a store failure.
   */
  async function store(records: IngestRecord[]): Promise<StoredBatch> {
    let t = performance.now();
    const first = records[0]!.seq;
    const last = records[records.length - 1]!.seq;
    const token = `${deps.log.id}-${first}-${last}`;
    const byProject = await group(records);
    t = timed('group', t);

    // Which fresh-looking traces had spans (or an execution) stored before: asked before this
    // batch's spans are stored, so the answer is about earlier requests only (and after the
    // previous batch's spans were stored: stages run in order).
    const fresh = new Map<string, string[]>();
    for (const [projectId, traces] of byProject) {
      const candidates = [...traces].filter(([, t]) => t.complete && t.root && t.genAi).map(([id]) => id);
      if (candidates.length === 0) continue;
      const known = await deps.knownTraces(projectId, candidates);
      fresh.set(
        projectId,
        candidates.filter((id) => !known.has(id)),
      );
    }
    t = timed('known', t);

    // Records encoded before a migration appended columns to `spans` (replayed after an upgrade)
    // are inserted with the columns they hold: one insert per run of records alike, normally one.
    for (let i = 0; i < records.length;) {
      let j = i + 1;
      while (j < records.length && records[j]!.header.c === records[i]!.header.c) j++;
      const part = i === 0 && j === records.length ? token : `${token}-${i}`;
      await deps.insertSpans(
        records.slice(i, j).map((r) => r.payload!),
        part,
        records[i]!.header.c,
      );
      i = j;
    }
    timed('spans', t);
    return { records, token, byProject, fresh };
  }

  /**
   * A stored batch's second stage: its fresh traces assembled from its own spans, the others
   * marked for read-back, then the batch marked loaded. Throws (to be retried) on a store failure.
   */
  async function settle({ records, token, byProject, fresh }: StoredBatch): Promise<void> {
    const t = performance.now();
    const readBack: TraceRef[] = [];
    for (const [projectId, traces] of byProject) {
      const ids = fresh.get(projectId) ?? [];
      let lease: Lease | undefined;
      let written = new Set<string>();
      if (ids.length > 0) {
        // Another node may hold spans of the same trace: only a trace this node could lock is assembled here.
        lease = await deps.pending.lockFresh(
          ids.map((traceId) => ({ projectId, traceId })),
          now(),
        );
        const mine = new Set(lease.traces.map((t) => t.traceId));
        if (mine.size > 0) {
          const given = new Set<string>();
          const notWritten = new Set(
            await deps.assembleFresh(projectId, freshSpans(records, projectId, traces, mine, given), `${token}-${projectId}`),
          );
          written = new Set([...given].filter((id) => !notWritten.has(id)));
        }
        const done = lease.traces.filter((t) => written.has(t.traceId));
        const later = lease.traces.filter((t) => !written.has(t.traceId)).map((trace) => ({ trace, dueAt: now() }));
        await deps.pending.finish(lease, done, later);
        stats.assembledFresh += done.length;
        deps.metrics.executionsAssembled.inc({ path: 'request' }, done.length);
      }
      const leased = new Set(lease?.traces.map((t) => t.traceId));
      for (const traceId of traces.keys()) if (!written.has(traceId) && !leased.has(traceId)) readBack.push({ projectId, traceId });
    }
    if (readBack.length > 0) {
      const dueAt = now() + deps.debounceMs;
      await deps.pending.mark(readBack, dueAt);
      stats.markedForReadBack += readBack.length;
      await deps
        .wake(dueAt)
        .catch((err: Error) =>
          deps.logger.warn({ err: { message: err.message } }, 'assembly wake-up not enqueued; the scheduled sweep takes the traces'),
        );
    }
    deps.log.markLoaded(records[records.length - 1]!.seq);
    stats.batches++;
    stats.loadedRecords += records.length;
    const rows = records.reduce((n, r) => n + r.header.n, 0);
    stats.loadedRows += rows;
    deps.metrics.rowsWritten.inc({ table: 'spans' }, rows);
    timed('assemble', t);
  }

  /** Stores and settles `records` in one go (a batch being isolated: nothing else loads meanwhile). */
  async function loadAlone(records: IngestRecord[]): Promise<void> {
    try {
      await settle(await store(records));
    } catch (err) {
      await recover(records, err);
    }
  }

  /**
   * After `records` failed with `err`: while a store is in trouble (it does not answer, or says it
   * is out of space, read-only, overloaded), the same records are tried again with backoff, as long
   * as it takes. While the stores answer, the failure is the records': a batch is split and each
   * half loaded on its own, in order; a record that fails alone DEAD_LETTER_ATTEMPTS times is set
   * aside. Throws when stopping (what is not loaded stays in the log for the next start).
   */
  async function recover(records: IngestRecord[], err: unknown): Promise<void> {
    let backoffMs = 100;
    let alone = 1;
    for (;;) {
      stats.failures++;
      deps.metrics.loadFailures.inc();
      consumer.wakeFlushes(); // a flush waits for what can be loaded now, not for the store to come back
      if (consumer.stopping) throw err;
      const theRecords = !isTransientStoreError(err) && (await deps.storesAnswer().catch(() => false));
      if (theRecords && records.length > 1) {
        const half = records.length >> 1;
        await loadAlone(records.slice(0, half));
        await loadAlone(records.slice(half));
        return;
      }
      if (theRecords && alone >= DEAD_LETTER_ATTEMPTS) return setAside(records[0]!, err, alone);
      if (theRecords) alone++;
      deps.logger.warn({ records: records.length, err: { message: (err as Error).message } }, 'ingest batch not loaded; retrying');
      await new Promise((r) => setTimeout(r, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 5_000);
      try {
        await settle(await store(records));
        return;
      } catch (e) {
        err = e;
      }
    }
  }

  /** A record that fails alone while the stores answer: kept as a dead letter (durably), then passed. */
  function setAside(record: IngestRecord, err: unknown, attempts: number): void {
    const error = (err as Error)?.message ?? String(err);
    deps.deadLetters.add({ seq: record.seq, header: record.header, error, attempts, failedAt: now() }, record.payload!);
    deps.log.markLoaded(record.seq);
    stats.deadLettered++;
    deps.metrics.deadLettered.inc();
    deps.logger.error(
      { seq: record.seq, project: record.header.p, spans: record.header.n, err: { message: error } },
      'ingest record set aside as a dead letter: it fails alone while the stores answer',
    );
  }

  return {
    stats,
    start: consumer.start,
    /** Resolves once every record written so far is loaded, or a load failed (the store is down: they stay in the log). */
    flush: consumer.flush,
    /** Loads what is queued, then stops (and closes the log). */
    stop: consumer.stop,
  };
}

export type SpanLoader = ReturnType<typeof createSpanLoader>;
