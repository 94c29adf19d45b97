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
import { eventAttributes, eventNameOf, mapLogRecord } from './mapping/log-events.ts';
import { EVALUATION_EVENT, evaluationOf, type Evaluation } from './mapping/evaluations.ts';
import { idProblem } from './otlp/validate.ts';
import { unavailable } from '../errors.ts';

export interface LogIngestDeps {
  writer: Pick<BatchWriter, 'write'>;
  pending: Pick<PendingTraces, 'mark'>;
  wake(dueAt: number): Promise<void>;
  debounceMs: number;
  metrics: Pick<Metrics, 'logRecords'>;
  logger: Logger;
  now?: () => number;
  /** Stores evaluation events as scores (scores/service.ts recordEvaluations). */
  recordEvaluations(projectId: string, evaluations: Evaluation[], author: string): Promise<{ stored: number; rejected: string[] }>;
  /** The span that carries a `gen_ai.response.id`: where an evaluation without span context belongs. */
  spanOfResponse(projectId: string, responseId: string): Promise<{ trace_id: string; span_id: string } | undefined>;
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
  /** Scores made from evaluation events (gen_ai.evaluation.result). */
  scores_recorded: number;
  explain?: { records: LogRecordExplanation[] };
}

export function createLogIngest(deps: LogIngestDeps) {
  const now = deps.now ?? Date.now;

  /**
   * The evaluation events of a request, each joined to its span: the record's span context, else
   * the span that carries its gen_ai.response.id. One that joins no span is ignored with the reason.
   */
  async function evaluationsOf(projectId: string, decoded: LogsDecodeResult, explained?: LogRecordExplanation[]): Promise<Evaluation[]> {
    const out: Evaluation[] = [];
    const responses = new Map<string, { trace_id: string; span_id: string } | undefined>();
    for (const rec of decoded.records) {
      if (eventNameOf(rec) !== EVALUATION_EVENT) continue;
      const say = (status: 'mapped' | 'ignored', reason: string, traceId = rec.traceId, spanId = rec.spanId) =>
        explained?.push({
          index: rec.index,
          event_name: EVALUATION_EVENT,
          trace_id: traceId || null,
          span_id: spanId || null,
          status,
          reason,
        });
      const r = evaluationOf(eventAttributes(EVALUATION_EVENT, rec), {
        traceId: rec.traceId,
        spanId: rec.spanId,
        timeNs: rec.timeNs || rec.observedTimeNs,
      });
      if ('reason' in r) {
        say('ignored', r.reason);
        continue;
      }
      const e = r.evaluation;
      if (idProblem(e.traceId, e.spanId, '') !== undefined) {
        if (!e.responseId) {
          say('ignored', 'an evaluation with no span context and no gen_ai.response.id: no span to score');
          continue;
        }
        if (!responses.has(e.responseId)) responses.set(e.responseId, await deps.spanOfResponse(projectId, e.responseId));
        const span = responses.get(e.responseId);
        if (!span) {
          say(
            'ignored',
            `no stored span carries gen_ai.response.id ${e.responseId} (yet): send the evaluation after its span, or with its span context`,
          );
          continue;
        }
        e.traceId = span.trace_id;
        e.spanId = span.span_id;
      }
      out.push(e);
      say(
        'mapped',
        `score ${e.name} on span ${e.spanId} of trace ${e.traceId}${e.value !== undefined ? `: ${e.value}` : ''}${e.label ? ` (${e.label})` : ''}`,
        e.traceId,
        e.spanId,
      );
    }
    return out;
  }

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
      const evaluations = await evaluationsOf(projectId, decoded, opts.explain ? explained : undefined);
      let bytes = 0;
      for (const rec of decoded.records) {
        if (eventNameOf(rec) === EVALUATION_EVENT) continue; // a score (above), not a message event
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
      let scoresRecorded = 0;
      if (evaluations.length > 0) {
        try {
          scoresRecorded = (await deps.recordEvaluations(projectId, evaluations, opts.apiKeyId ? `api_key:${opts.apiKeyId}` : 'otel'))
            .stored;
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'evaluation events not stored as scores');
          throw unavailable('The scores of the evaluation events could not be stored; retry', 1);
        }
      }
      explained.sort((a, b) => a.index - b.index);
      const ignored = decoded.records.length - rows.length - evaluations.length;
      if (rows.length > 0) deps.metrics.logRecords.inc({ outcome: 'mapped' }, rows.length);
      if (ignored > 0) deps.metrics.logRecords.inc({ outcome: 'ignored' }, ignored);
      return {
        log_records: decoded.records.length,
        events_mapped: rows.length,
        log_records_ignored: ignored,
        scores_recorded: scoresRecorded,
        ...(opts.explain ? { explain: { records: explained } } : {}),
      };
    },
  };
}

export type LogIngest = ReturnType<typeof createLogIngest>;
