// Trace assembly, run as a job (BullMQ or in-process): takes the traces that are due, reads their
// spans in one query, and writes an execution for each trace that holds a generative-AI span —
// when its root span has arrived, or when no span came for the quiet period (a lost root). A
// trace whose execution exists and changed gets a correction: a cancel row repeating the stored
// row (sign −1, same version) and the new row (sign +1, version + 1), written in one insert, so
// every sum over executions (daily spend included) stays exact without FINAL. The same content
// writes nothing: retried batches and repeated runs change nothing.
import { nextTurn } from '../../event-loop.ts';
import type { Metrics } from '../../metrics.ts';
import { isRefusedData } from '../../stores/batch-writer.ts';
import type { BatchWriter } from '../../stores/batch-writer.ts';
import type { Logger } from '../../logger.ts';
import type { JobProcessor, JobRunner } from '../../jobs/runner.ts';
import { toClickHouseTime } from '../../time.ts';
import type { Lease, PendingTraces, TraceRef } from './pending.ts';
import { summarizeTrace, type SummarizeDeps } from '../../executions/from-spans.ts';
import type { StoredSpan } from '../../executions/span-rows.ts';
import { executionRow } from '../../executions/row.ts';
import type { Template } from '../../prompts/template.ts';
import { mergeLogEvents } from './log-messages.ts';
import type { CurrentRows, ExecutionAssembly } from '../../executions/execution-assembly-repository.ts';
import type { SpanRepository } from '../../executions/span-repository.ts';

export const ASSEMBLY_JOB = 'trace-assembly';

/**
 * A request's spans as a read-back returns them: one row per span id (the latest), ordered by
 * span id, messages only on inference and tool spans. Both paths then hash the same content.
 */
function asReadBack(spans: readonly StoredSpan[]): StoredSpan[] {
  const byId = new Map<string, StoredSpan>();
  for (const s of spans) {
    const had = byId.get(s.span_id);
    if (!had || had.received_at < s.received_at) byId.set(s.span_id, s);
  }
  return [...byId.values()]
    .sort((a, b) => (a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0))
    .map((s) => (s.messages && s.span_class !== 'inference' && s.span_class !== 'tool' ? { ...s, messages: '' } : s));
}
/** Sweeps are keyed by the time bucket their traces are due in, so marks never wait on a running sweep. */
const BUCKET_MS = 250;
const BATCH_TRACES = 1_000;
/** A trace that failed to assemble (or whose execution the store refused) is tried again after this. */
const FAILED_RETRY_MS = 60_000;

const MAX_BATCHES_PER_RUN = 10;

export interface AssemblerDeps extends SummarizeDeps {
  spans: Pick<SpanRepository, 'forAssembly' | 'logEvents' | 'tracesWithSpans' | 'genAiTracesSince'>;
  executions: Pick<ExecutionAssembly, 'current' | 'indexedTraces' | 'assembledSince' | 'batch'>;
  executionsWriter: BatchWriter;
  pending: PendingTraces;
  jobs: Pick<JobRunner, 'enqueue'>;
  logger: Logger;
  quietMs: number;
  metrics: Pick<Metrics, 'executionsAssembled' | 'rowsWritten'>;
  /** Called with each project whose spend an assembly moved (budget evaluation). */
  onSpendMoved?: (projectId: string) => void;
  /** Executions of these traces were written (their scores take the new dimensions). */
  onExecutionsWritten?: (projectId: string, traceIds: string[]) => void;
  now?: () => number;
}

export function createAssembler(deps: AssemblerDeps) {
  const now = deps.now ?? Date.now;

  /** Asks for a sweep once `dueAt` has passed. */
  async function wake(dueAt: number): Promise<void> {
    const bucket = Math.floor(dueAt / BUCKET_MS);
    const delayMs = Math.max(0, (bucket + 1) * BUCKET_MS - now());
    await deps.jobs.enqueue(ASSEMBLY_JOB, {}, { jobId: `sweep-${bucket}`, delayMs });
  }

  async function readSpans(projectId: string, traceIds: string[]): Promise<Map<string, StoredSpan[]>> {
    const byTrace = await deps.spans.forAssembly(projectId, traceIds);
    // GenAI events sent as logs fill what their spans do not carry (log-messages.ts).
    const events = await deps.spans.logEvents(projectId, [...byTrace.keys()]);
    for (const [traceId, spans] of events.size > 0 ? byTrace : []) byTrace.set(traceId, mergeLogEvents(spans, events.get(traceId)));
    return byTrace;
  }

  /** One trace's rows to write (cancel + new, or new), or why not. */
  type Outcome = { kind: 'write'; rows: object[] } | { kind: 'same' } | { kind: 'skip' } | { kind: 'later'; dueAt: number };

  async function assembleTrace(
    projectId: string,
    traceId: string,
    spans: StoredSpan[] | undefined,
    current: CurrentRows,
    summarizeDeps: SummarizeDeps,
  ): Promise<Outcome> {
    if (!spans || !spans.some((s) => s.span_class === 'inference')) return { kind: 'skip' }; // not an execution (yet)
    if (!spans.some((s) => !s.parent_span_id)) {
      let lastReceived = 0; // a loop, not Math.max(...): a trace may hold more spans than the stack has room for arguments
      for (const s of spans) lastReceived = Math.max(lastReceived, Date.parse(`${s.received_at.replace(' ', 'T')}Z`));
      if (now() - lastReceived < deps.quietMs) return { kind: 'later', dueAt: lastReceived + deps.quietMs };
    }
    const stored = current.rows.get(traceId);
    if (!stored && current.located.has(traceId)) {
      // Indexed but its row is gone (retention removed it): it was counted once already; a replay
      // of its spans must not count it again.
      deps.logger.warn(
        { project_id: projectId, trace_id: traceId },
        'spans for an execution whose row retention removed: not counted again',
      );
      return { kind: 'same' };
    }
    // A correction keeps the prompt versions the execution recorded: `latest` or a label resolved
    // when the trace was first assembled does not move because a prompt changed since.
    const recorded = new Map<string, number>();
    if (stored) {
      const ids = (stored['tu.prompt_id'] ?? []) as string[];
      const refs = (stored['tu.version_ref'] ?? []) as string[];
      const versions = (stored['tu.version'] ?? []) as Array<number | string>;
      ids.forEach((id, i) => recorded.set(`${id}\u0000${refs[i]}`, Number(versions[i])));
    }
    const summary = await summarizeTrace(projectId, spans, {
      ...summarizeDeps,
      resolvePrompt: (p, promptId, ref) => {
        const kept = recorded.get(`${promptId}\u0000${ref}`);
        return kept !== undefined ? Promise.resolve(kept) : summarizeDeps.resolvePrompt(p, promptId, ref);
      },
    });
    // The same content, or a direct record of this trace id (never replaced by spans).
    if (stored && (stored.source !== 'otlp' || stored.content_hash === summary.contentHash)) return { kind: 'same' };
    const version = stored ? Number(stored.version) + 1 : 1;
    const rows: object[] = stored ? [{ ...stored, sign: -1 }] : [];
    rows.push(
      executionRow(summary.row, { version, sign: 1, received_at: toClickHouseTime(new Date(now())), content_hash: summary.contentHash }),
    );
    return { kind: 'write', rows };
  }

  /** Prompt lookups shared by a batch of traces (they mostly name the same prompts). */
  function batchSummarizeDeps(): SummarizeDeps {
    const resolved = new Map<string, Promise<number | undefined>>();
    const templates = new Map<string, Promise<Template | undefined>>();
    return {
      prices: deps.prices,
      resolvePrompt(p, promptId, ref) {
        const key = `${promptId}\u0000${ref}`;
        let v = resolved.get(key);
        if (!v) resolved.set(key, (v = deps.resolvePrompt(p, promptId, ref)));
        return v;
      },
      promptTemplate(p, promptId, version) {
        const key = `${promptId}\u0000${version}`;
        let t = templates.get(key);
        if (!t) templates.set(key, (t = deps.promptTemplate?.(p, promptId, version) ?? Promise.resolve(undefined)));
        return t;
      },
    };
  }

  /** Of these traces, the ones with spans, an execution or GenAI log events stored (light key reads, no FINAL): those are read back. */
  async function knownTraces(projectId: string, traceIds: string[]): Promise<Set<string>> {
    const [withSpans, indexed] = await Promise.all([
      deps.spans.tracesWithSpans(projectId, traceIds),
      deps.executions.indexedTraces(projectId, traceIds),
    ]);
    return new Set([...withSpans, ...indexed]);
  }

  /**
   * Executions of traces whose spans are all at hand and of which nothing was stored before
   * (the loader checked), trace by trace as `traces` yields them: each summarised and encoded at
   * once (nothing but its bytes kept until the batch is written, so what a batch decodes dies
   * young), then written in one insert. Returns the traces not written (one that cannot be
   * summarised or stored, or all when the store refused the batch): they are read back like any other.
   */
  async function assembleFresh(projectId: string, traces: AsyncIterable<[string, StoredSpan[]]>, dedupToken: string): Promise<string[]> {
    const summarizeDeps = batchSummarizeDeps();
    const batch = await deps.executions.batch();
    const written: string[] = [];
    const notWritten: string[] = [];
    const receivedAt = toClickHouseTime(new Date(now()));
    let n = 0;
    for await (const [traceId, spans] of traces) {
      // A batch holds thousands of traces: requests waiting on the same thread get their turn.
      if (++n % 16 === 0) await nextTurn();
      try {
        const summary = await summarizeTrace(projectId, asReadBack(spans), summarizeDeps);
        batch.add(executionRow(summary.row, { version: 1, sign: 1, received_at: receivedAt, content_hash: summary.contentHash }));
        written.push(traceId);
      } catch (err) {
        deps.logger.warn(
          { project_id: projectId, trace_id: traceId, err: { message: (err as Error).message } },
          'trace not assembled from its request; reading it back',
        );
        notWritten.push(traceId);
      }
    }
    if (batch.rows === 0) return notWritten;
    try {
      await batch.insert(dedupToken);
    } catch (err) {
      if (!isRefusedData(err)) throw err; // a store that is down: the loader tries the batch again
      deps.logger.warn(
        { project_id: projectId, traces: batch.rows, err: { message: (err as Error).message } },
        'executions refused as a batch; reading their traces back one by one',
      );
      return [...written, ...notWritten];
    }
    deps.onSpendMoved?.(projectId);
    deps.onExecutionsWritten?.(projectId, written);
    deps.metrics.rowsWritten.inc({ table: 'executions' }, batch.rows);
    return notWritten;
  }

  /** Assembles a project's share of a lease; returns the traces done and those due again later. */
  async function assembleProject(
    lease: Lease,
    projectId: string,
    traceIds: string[],
  ): Promise<{ done: TraceRef[]; later: Array<{ trace: TraceRef; dueAt: number }> }> {
    const spansByTrace = await readSpans(projectId, traceIds);
    const current = await deps.executions.current(projectId, traceIds);
    const summarizeDeps = batchSummarizeDeps();
    const done: TraceRef[] = [];
    const later: Array<{ trace: TraceRef; dueAt: number }> = [];
    const writes: Array<{ trace: TraceRef; rows: object[] }> = [];
    for (const traceId of traceIds) {
      const trace = { projectId, traceId };
      try {
        const o = await assembleTrace(projectId, traceId, spansByTrace.get(traceId), current, summarizeDeps);
        if (o.kind === 'write') writes.push({ trace, rows: o.rows });
        else if (o.kind === 'later') later.push({ trace, dueAt: o.dueAt });
        else done.push(trace);
      } catch (err) {
        // One trace that cannot be assembled holds up no other: it is tried again later.
        deps.logger.warn(
          { project_id: projectId, trace_id: traceId, err: { message: (err as Error).message } },
          'trace not assembled; retrying later',
        );
        later.push({ trace, dueAt: now() + FAILED_RETRY_MS });
      }
    }
    if (writes.length > 0) {
      // A trace whose lease ran out meanwhile is another worker's now: it writes, this one does not.
      const held = await deps.pending.stillHeld(
        lease,
        writes.map((w) => w.trace),
      );
      const mine = writes.filter((_w, i) => held[i]);
      // One write per trace (its cancel and new rows together): the writer batches them into one
      // insert, and a trace whose rows the store refuses fails alone.
      const results = await Promise.allSettled(
        mine.map((w) =>
          deps.executionsWriter.write(
            w.rows,
            w.rows.reduce<number>(
              (n, r) => n + String((r as { conversation_history?: string }).conversation_history ?? '').length + 1024,
              0,
            ),
          ),
        ),
      );
      let moved = false;
      results.forEach((r, i) => {
        const w = mine[i]!;
        if (r.status === 'fulfilled') {
          done.push(w.trace);
          moved = true;
          deps.metrics.executionsAssembled.inc({ path: 'read_back' });
          deps.metrics.rowsWritten.inc({ table: 'executions' }, w.rows.length);
        } else {
          deps.logger.warn(
            { project_id: projectId, trace_id: w.trace.traceId, err: { message: (r.reason as Error).message } },
            'execution not written; retrying later',
          );
          later.push({ trace: w.trace, dueAt: now() + FAILED_RETRY_MS });
        }
      });
      if (moved) deps.onSpendMoved?.(projectId);
      const wrote = mine.filter((_w, i) => results[i]!.status === 'fulfilled').map((w) => w.trace.traceId);
      if (wrote.length) deps.onExecutionsWritten?.(projectId, wrote);
    }
    return { done, later };
  }

  /** One sweep: every due trace, in batches, until none is due or the run has done its share. */
  async function sweep(): Promise<number> {
    let count = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      const lease = await deps.pending.takeDue(now(), BATCH_TRACES);
      if (lease.traces.length === 0) break;
      const byProject = new Map<string, string[]>();
      for (const t of lease.traces) {
        let ids = byProject.get(t.projectId);
        if (!ids) byProject.set(t.projectId, (ids = []));
        ids.push(t.traceId);
      }
      const done: TraceRef[] = [];
      const later: Array<{ trace: TraceRef; dueAt: number }> = [];
      let failure: unknown;
      for (const [projectId, ids] of byProject) {
        try {
          const r = await assembleProject(lease, projectId, ids);
          done.push(...r.done);
          later.push(...r.later);
        } catch (err) {
          // A store that failed: nothing is lost, the project's traces are due again shortly.
          failure ??= err;
          for (const traceId of ids) later.push({ trace: { projectId, traceId }, dueAt: now() + 1_000 });
        }
      }
      await deps.pending.finish(lease, done, later);
      if (later.length > 0) await wake(later.reduce((min, l) => Math.min(min, l.dueAt), Infinity));
      if (failure) throw failure; // the job's retry (with backoff) or the next sweep takes them
      count += lease.traces.length;
    }
    const next = await deps.pending.nextDue();
    if (next !== undefined) await wake(Math.max(next, now()));
    return count;
  }

  /**
   * After a restart of a process whose pending traces lived in its memory: marks the traces that
   * received generative-AI spans since `sinceMs` and whose execution is missing or older than
   * their last span. Assembly is idempotent, so marking too many costs only work.
   */
  async function recover(sinceMs: number, limit = 100_000): Promise<number> {
    const since = toClickHouseTime(new Date(sinceMs));
    // Traces that received generative-AI spans, or GenAI log events for their spans, since then.
    const [candidates, assembled] = await Promise.all([deps.spans.genAiTracesSince(since, limit), deps.executions.assembledSince(since)]);
    const done = new Map(assembled.map((e) => [`${e.project_id}\u0000${e.trace_id}`, e.at]));
    const stale = candidates
      .filter((c) => {
        const at = done.get(`${c.project_id}\u0000${c.trace_id}`);
        return at === undefined || at < c.last;
      })
      .map((c) => ({ projectId: c.project_id, traceId: c.trace_id }));
    if (stale.length > 0) {
      await deps.pending.mark(stale, now());
      await wake(now());
    }
    return stale.length;
  }

  const processor: JobProcessor = {
    name: ASSEMBLY_JOB,
    attempts: 3,
    backoffMs: 500,
    async process() {
      const n = await sweep();
      if (n > 0) deps.logger.debug({ traces: n }, 'traces assembled');
    },
  };

  /**
   * Repricing: what assembling these traces again now would change of their stored executions
   * (cost before and after, exact text), written nowhere. Traces whose execution would stay the
   * same (or that have none, or no spans any more) are absent.
   */
  async function preview(projectId: string, traceIds: string[]): Promise<Map<string, { before: string; after: string }>> {
    const spansByTrace = await readSpans(projectId, traceIds);
    const current = await deps.executions.current(projectId, traceIds);
    const summarizeDeps = batchSummarizeDeps();
    const changed = new Map<string, { before: string; after: string }>();
    for (const traceId of traceIds) {
      const o = await assembleTrace(projectId, traceId, spansByTrace.get(traceId), current, summarizeDeps);
      if (o.kind !== 'write' || o.rows.length !== 2) continue; // only a correction of a stored execution
      const [cancel, next] = o.rows as Array<{ cost_usd: unknown }>;
      changed.set(traceId, { before: String(cancel!.cost_usd), after: String(next!.cost_usd) });
    }
    return changed;
  }

  /** Repricing: assembles these traces again now, through the leased path every correction takes. */
  async function reassemble(refs: TraceRef[]): Promise<void> {
    if (refs.length === 0) return;
    await deps.pending.mark(refs, now());
    await sweep();
  }

  return { processor, wake, sweep, recover, knownTraces, assembleFresh, preview, reassemble };
}

export type Assembler = ReturnType<typeof createAssembler>;
