// OTLP trace ingest: decode the export, map every span's conventions and encode the spans as rows
// of the `spans` table (RowBinary; span-encoding.ts, on an encoding worker when INGEST_WORKERS
// allows), and append them to the ingest log as one record. The request is
// answered once the log's fsync covers the record: the durable point. The loader (span-loader.ts)
// stores the records in ClickHouse in large batches and gets their traces assembled; nothing on
// this path waits for ClickHouse. `executions_created` counts the request's traces that bring a
// generative-AI span this deployment had not seen (pending.claimGenAi).
import { PayloadTooLarge, unavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { PendingTraces } from './assembly/pending.ts';
import { startWindow, toClickHouseTime } from '../time.ts';
import type { RowEncoder } from '../stores/row-binary.ts';
import { LogFullError, LogWriteError } from '../stores/write-ahead-log.ts';
import { refusalText } from '../stores/errors.ts';
import type { WriteRefusals } from '../stores/write-refusals.ts';
import { traceFlags, type IngestLog } from './span-loader.ts';
import type { Metrics } from '../metrics.ts';
import type { DecodeResult } from '../executions/span.ts';
import {
  decodeTraceBody,
  encodeSpans,
  type EncodedSpans,
  type SpanEncodingOptions,
  type SpanExplanation,
  type TraceBody,
} from './span-encoding.ts';
import type { EncodePool } from './encode-pool.ts';
import type { Evaluation } from './mapping/evaluations.ts';

export type { SpanExplanation, TraceBody } from './span-encoding.ts';

export interface TraceIngestDeps {
  log: IngestLog;
  /** The RowBinary encoder of the `spans` table. */
  spansEncoder(): Promise<RowEncoder>;
  /** Encoding workers (INGEST_WORKERS); without them, a request is encoded on the thread that received it. */
  encodePool?(): EncodePool | undefined;
  pending: Pick<PendingTraces, 'claimGenAi'>;
  /** Stores evaluation events as scores (scores/service.ts recordEvaluations). */
  recordEvaluations(projectId: string, evaluations: Evaluation[], author: string): Promise<{ stored: number; rejected: string[] }>;
  /** Stores the links of traces to dataset run items their spans state (datasets/runs.ts linkFromSpans). */
  recordRunLinks(
    projectId: string,
    links: Array<{ traceId: string; runId: string; itemId: string }>,
  ): Promise<{ stored: number; rejected: string[] }>;
  /** The ingest queue's bound: a request beyond it could never be accepted (413). */
  maxQueueRows: number;
  maxQueueBytes: number;
  /** Accepted start times, in days before and after now (a span outside is rejected). */
  spanMaxAgeDays: number;
  spanMaxFutureDays: number;
  metrics: Pick<Metrics, 'spansAccepted' | 'spansRejected' | 'ingestRefused'>;
  /** Where a write the disk refused (ENOSPC...) is recorded for /api/health, and cleared by the next one that succeeds. */
  refusals?: Pick<WriteRefusals, 'failed' | 'wrote'>;
  logger: Logger;
}

export interface IngestResult {
  spans_ingested: number;
  executions_created: number;
  spans_rejected: number;
  /** Scores the spans' evaluation events became. */
  scores_recorded: number;
  errors: string[];
  explain?: { spans: SpanExplanation[]; rejected: DecodeResult['rejected'] };
}

export function createTraceIngest(deps: TraceIngestDeps) {
  let encoder: RowEncoder | undefined;
  /** The 503 of a log that refuses (counted). */
  function refusedBy(err: LogFullError): Error {
    if (err.reason === 'disk') {
      deps.metrics.ingestRefused.inc({ reason: 'disk_low' });
      return unavailable(`The disk of the ingest log is nearly full (${err.message}); retry later`, 5);
    }
    deps.metrics.ingestRefused.inc({ reason: err.reason === 'lag' ? 'behind' : 'queue_full' });
    return unavailable(
      err.reason === 'lag'
        ? 'Ingest is behind (spans accepted earlier are still being stored); retry later'
        : 'The spans write queue is full; retry later',
      1,
    );
  }
  return {
    /** Throws the 503 a request would get now, before its body is read and decoded: refused work is not done. */
    admit(): void {
      const refused = deps.log.refusal();
      if (refused) throw refusedBy(refused);
    },
    /**
     * Decodes, maps and encodes an export (on an encoding worker when there are), appends it to the
     * log once durable. `apiKeyId`: the key of the caller, recorded on every span ('' for other credentials).
     */
    async ingest(projectId: string, body: TraceBody, opts: SpanEncodingOptions = {}): Promise<IngestResult> {
      const nowMs = Date.now();
      const receivedAt = toClickHouseTime(new Date(nowMs));
      opts = { ...opts, startWindow: startWindow(nowMs, deps.spanMaxAgeDays, deps.spanMaxFutureDays) };
      const pool = deps.encodePool?.();
      let encoded: EncodedSpans;
      if (pool) encoded = await pool.encode(projectId, body, receivedAt, opts);
      else {
        encoder ??= await deps.spansEncoder();
        encoded = encodeSpans(projectId, decodeTraceBody(body), encoder, receivedAt, opts);
      }
      const { rows, payload, rejected, errors } = encoded;

      if (rows > deps.maxQueueRows || payload.byteLength > deps.maxQueueBytes) {
        // It would never fit, however long the client waited: not a 503 to retry.
        deps.metrics.ingestRefused.inc({ reason: 'too_large' });
        throw new PayloadTooLarge(
          `The request carries ${rows} spans rows (${payload.byteLength} bytes); one request may carry at most ${deps.maxQueueRows} rows and ${deps.maxQueueBytes} bytes`,
        );
      }
      try {
        await deps.log.append(
          { p: projectId, n: rows, t: encoded.traceIds, f: traceFlags(encoded), c: encoded.columns },
          Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
        );
      } catch (err) {
        if (err instanceof LogFullError) throw refusedBy(err);
        if (err instanceof LogWriteError) {
          deps.metrics.ingestRefused.inc({ reason: 'log_write' });
          deps.logger.error({ err: { message: err.message } }, 'ingest log write failed');
          const refusal = deps.refusals?.failed('ingest_log', err.cause);
          throw unavailable(
            `The spans could not be made durable (${refusal ? refusalText('ingest_log', refusal) : 'the ingest log cannot be written'}); retry later`,
            5,
          );
        }
        throw err;
      }
      deps.refusals?.wrote('ingest_log');

      // The spans are durable; their evaluation events become scores (idempotent: a retry of this
      // export after a 503 writes each score once).
      let scoresRecorded = 0;
      if (encoded.evaluations.length > 0) {
        try {
          const r = await deps.recordEvaluations(projectId, encoded.evaluations, opts.apiKeyId ? `api_key:${opts.apiKeyId}` : 'otel');
          scoresRecorded = r.stored;
          errors.push(...r.rejected.slice(0, 20));
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'spans stored, their evaluation scores not');
          throw unavailable('The spans were stored but the scores of their evaluation events could not be; retry', 1);
        }
      }

      // Run links too (an upsert per run and item: a retry writes the same link again).
      if (encoded.datasetLinks.length > 0) {
        try {
          errors.push(...(await deps.recordRunLinks(projectId, encoded.datasetLinks)).rejected.slice(0, 20));
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'spans stored, their dataset run links not');
          throw unavailable('The spans were stored but their dataset run links could not be; retry', 1);
        }
      }

      deps.metrics.spansAccepted.inc(rows);
      if (rejected.length > 0) deps.metrics.spansRejected.inc(rejected.length);
      // Only feeds the response's count: a failure (Redis down) counts nothing, and fails nothing.
      const genAi = encoded.traceIds.filter((_, i) => encoded.genAi[i]).map((traceId) => ({ projectId, traceId }));
      const firstSight = await deps.pending.claimGenAi(genAi).catch(() => genAi.map(() => false));
      const created = firstSight.filter(Boolean).length;

      return {
        spans_ingested: rows,
        executions_created: created,
        spans_rejected: rejected.length,
        scores_recorded: scoresRecorded,
        errors,
        ...(opts.explain ? { explain: { spans: encoded.explain ?? [], rejected } } : {}),
      };
    },
  };
}

export type TraceIngest = ReturnType<typeof createTraceIngest>;
