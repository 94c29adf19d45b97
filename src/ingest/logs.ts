// OTLP log ingest after decoding: GenAI events carried as log records are stored keyed by their
// trace and span (span_log_events) and their traces are marked for assembly, which merges them
// into the spans' messages (assembly/log-messages.ts) whether the spans came before or after.
// Every other record is accepted and counted as ignored; `explain` says per record what was
// mapped or ignored and why. The events are stored before the answer (the batching writer
// resolves once ClickHouse acknowledged them): logs are few beside spans and need no ingest log.
import crypto from 'node:crypto';
import { toClickHouseTime } from '../time.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { BatchWriter } from '../stores/batch-writer.ts';
import type { PendingTraces, TraceRef } from './assembly/pending.ts';
import type { LogsDecodeResult } from './otlp/logs.ts';
import { mapLogRecord } from './mapping/log-events.ts';
import { unavailable } from '../errors.ts';

export interface LogIngestDeps {
  writer: Pick<BatchWriter, 'write'>;
  pending: Pick<PendingTraces, 'mark'>;
  wake(dueAt: number): Promise<void>;
  debounceMs: number;
  metrics: Pick<Metrics, 'logRecords'>;
  logger: Logger;
  now?: () => number;
}

export interface LogRecordExplanation {
  index: number;
  event_name: string | null;
  trace_id: string | null;
  span_id: string | null;
  status: 'mapped' | 'ignored';
  reason: string;
  messages?: { input: number; output: number };
}

export interface LogIngestResult {
  log_records: number;
  events_mapped: number;
  log_records_ignored: number;
  explain?: { records: LogRecordExplanation[] };
}

export function createLogIngest(deps: LogIngestDeps) {
  const now = deps.now ?? Date.now;
  return {
    /** `apiKeyId`: the key of the caller, recorded on every event ('' for other credentials). */
    async ingest(
      projectId: string,
      decoded: LogsDecodeResult,
      opts: { explain?: boolean; apiKeyId?: string } = {},
    ): Promise<LogIngestResult> {
      const receivedAt = toClickHouseTime(new Date(now()));
      const rows: Array<Record<string, unknown>> = [];
      const traces = new Map<string, TraceRef>();
      const explained: LogRecordExplanation[] = [];
      let bytes = 0;
      for (const rec of decoded.records) {
        const m = mapLogRecord(rec);
        if (m.kind === 'mapped') {
          const attributes = JSON.stringify(m.event.attributes);
          const time = m.event.timeNs.toString();
          rows.push({
            project_id: projectId,
            trace_id: rec.traceId,
            span_id: rec.spanId,
            time_ns: time,
            received_at: receivedAt,
            seq: rec.index,
            event_name: m.eventName,
            // The same event exported twice (a retry) is one event to every reader.
            record_hash: crypto.createHash('sha256').update(`${m.eventName}\u0000${time}\u0000${attributes}`).digest('hex').slice(0, 32),
            attributes,
            api_key_id: opts.apiKeyId ?? '',
          });
          bytes += attributes.length + 256;
          traces.set(rec.traceId, { projectId, traceId: rec.traceId });
        }
        if (opts.explain) {
          explained.push({
            index: rec.index,
            event_name: m.eventName || null,
            trace_id: rec.traceId || null,
            span_id: rec.spanId || null,
            status: m.kind,
            reason:
              m.kind === 'mapped'
                ? `joined to span ${rec.spanId} of trace ${rec.traceId}: ${m.messages.input} input and ${m.messages.output} output messages`
                : m.reason,
            ...(m.kind === 'mapped' ? { messages: m.messages } : {}),
          });
        }
      }
      if (rows.length > 0) {
        await deps.writer.write(rows, bytes);
        // The events are stored; their traces are assembled again with them. A mark that fails
        // (Redis down) fails the request, so the exporter retries: a retried event is read once.
        const dueAt = now() + deps.debounceMs;
        try {
          await deps.pending.mark([...traces.values()], dueAt);
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'log events stored but their traces not marked for assembly');
          throw unavailable('The log events were stored but their traces could not be queued for assembly; retry', 1);
        }
        await deps
          .wake(dueAt)
          .catch((err: Error) =>
            deps.logger.warn({ err: { message: err.message } }, 'assembly wake-up not enqueued; the scheduled sweep takes the traces'),
          );
      }
      const ignored = decoded.records.length - rows.length;
      if (rows.length > 0) deps.metrics.logRecords.inc({ outcome: 'mapped' }, rows.length);
      if (ignored > 0) deps.metrics.logRecords.inc({ outcome: 'ignored' }, ignored);
      return {
        log_records: decoded.records.length,
        events_mapped: rows.length,
        log_records_ignored: ignored,
        ...(opts.explain ? { explain: { records: explained } } : {}),
      };
    },
  };
}

export type LogIngest = ReturnType<typeof createLogIngest>;
