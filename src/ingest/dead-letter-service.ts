// A project's dead letters (span-loader.ts sets them aside): listed with their error, replayed into
// the ingest log once what made them fail is fixed (they are loaded like any record, and set aside
// again if they still fail), or purged. Dead letters live beside this node's ingest log: each API
// node answers for its own (docs/traces.md, "Dead letters").
import { notFound, unavailable } from '../errors.ts';
import { LogFullError, LogWriteError } from '../stores/write-ahead-log.ts';
import type { DeadLetter } from '../stores/dead-letters.ts';
import type { IngestDeadLetters, IngestLog, IngestRecordHeader } from './span-loader.ts';

export interface DeadLetterView {
  id: string;
  /** Spans the record holds, and its traces (the first 100). */
  spans: number;
  trace_ids: string[];
  traces: number;
  error: string;
  attempts: number;
  failed_at: string;
  bytes: number;
  /** The ingest log (this node's) the record came from. */
  log_id: string;
}

const MAX_TRACE_IDS = 100;

export function createDeadLetterService(deps: { log: IngestLog; deadLetters: IngestDeadLetters }) {
  const present = (l: DeadLetter<IngestRecordHeader>): DeadLetterView => ({
    id: String(l.seq),
    spans: l.header.n,
    trace_ids: l.header.t.slice(0, MAX_TRACE_IDS),
    traces: l.header.t.length,
    error: l.error,
    attempts: l.attempts,
    failed_at: new Date(l.failedAt).toISOString(),
    bytes: l.payloadBytes,
    log_id: deps.log.id,
  });
  /** The project's dead letter `id`; 404 for another project's as for none (nothing is learnt of others). */
  const find = (projectId: string, id: string) => {
    const letter = /^\d{1,16}$/.test(id) ? deps.deadLetters.get(Number(id)) : undefined;
    if (!letter || letter.header.p !== projectId) throw notFound('Dead letter');
    return letter;
  };
  const replaying = new Set<number>();
  return {
    list(projectId: string): DeadLetterView[] {
      return deps.deadLetters.list((l) => l.header.p === projectId).map(present);
    },
    /** Appends the record to the ingest log again (durably), then forgets the dead letter. */
    async replay(projectId: string, id: string): Promise<{ id: string; spans: number }> {
      const letter = find(projectId, id);
      if (replaying.has(letter.seq)) throw notFound('Dead letter');
      replaying.add(letter.seq);
      try {
        await deps.log.append(letter.header, deps.deadLetters.payload(letter.seq));
      } catch (err) {
        if (err instanceof LogFullError || err instanceof LogWriteError)
          throw unavailable(`The ingest log cannot take the record now (${err.message}); retry later`, 5);
        throw err;
      } finally {
        replaying.delete(letter.seq);
      }
      deps.deadLetters.remove(letter.seq);
      return { id, spans: letter.header.n };
    },
    purge(projectId: string, id: string): void {
      deps.deadLetters.remove(find(projectId, id).seq);
    },
  };
}

export type DeadLetterService = ReturnType<typeof createDeadLetterService>;
