// Trace assembly, run as a job (BullMQ or in-process): takes the traces that are due, reads their
// spans in one query, and writes an execution for each trace that holds a generative-AI span —
// when its root span has arrived, or when no span came for the quiet period (a lost root). A
// trace whose execution exists and changed gets a correction: a cancel row repeating the stored
// row (sign −1, same version) and the new row (sign +1, version + 1), written in one insert, so
// every sum over executions (daily spend included) stays exact without FINAL. The same content
// writes nothing: retried batches and repeated runs change nothing.
import type { ClickHouseStore } from '../../stores/clickhouse.ts';
import type { BatchWriter } from '../batch-writer.ts';
import type { Logger } from '../../logger.ts';
import type { JobProcessor, JobRunner } from '../../../jobs/runner.ts';
import { toClickHouseTime } from '../../time.ts';
import type { PendingTraces, TraceRef } from './pending.ts';
import { summarizeTrace, type StoredSpan, type SummarizeDeps } from './summarize.ts';

export const ASSEMBLY_JOB = 'trace-assembly';
/** Sweeps are keyed by the time bucket their traces are due in, so marks never wait on a running sweep. */
const BUCKET_MS = 250;
const BATCH_TRACES = 1_000;
const MAX_BATCHES_PER_RUN = 10;

const SPAN_COLUMNS = `trace_id, span_id, parent_span_id, start_time_ns, end_time_ns, received_at, name, status_code, status_message,
  service_name, span_class, operation, provider, model, agent_id, session_id, has_usage, tokens_in, tokens_out, tokens_cached_in,
  tokens_cache_write_in, tokens_reasoning, toString(cost_provided) AS cost_provided, tool_name, tool_call_id, error_message,
  prompt_usages, if(span_class IN ('inference', 'tool'), messages, '') AS messages`;

export interface AssemblerDeps extends SummarizeDeps {
  clickhouse: ClickHouseStore;
  executionsWriter: BatchWriter;
  pending: PendingTraces;
  jobs: Pick<JobRunner, 'enqueue'>;
  logger: Logger;
  quietMs: number;
  /** Called with each project whose spend an assembly moved (budget evaluation). */
  onSpendMoved?: (projectId: string) => void;
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
    const rows = await deps.clickhouse.query<StoredSpan>(
      `SELECT ${SPAN_COLUMNS} FROM spans
       WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}
       ORDER BY trace_id, span_id, received_at DESC
       LIMIT 1 BY trace_id, span_id`,
      { p: projectId, ids: traceIds },
      'assembly.spans',
    );
    const byTrace = new Map<string, StoredSpan[]>();
    for (const r of rows) {
      let list = byTrace.get(r.trace_id);
      if (!list) byTrace.set(r.trace_id, (list = []));
      list.push(r);
    }
    return byTrace;
  }

  /** The stored rows (latest version) of these traces, every column, exact decimals as text. */
  async function currentRows(projectId: string, traceIds: string[]): Promise<Map<string, Record<string, unknown>>> {
    const located = await deps.clickhouse.query<{ trace_id: string; started_at: string }>(
      'SELECT trace_id, started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
      { p: projectId, ids: traceIds },
      'assembly.locate',
    );
    if (located.length === 0) return new Map();
    const rows = await deps.clickhouse.query<Record<string, unknown> & { trace_id: string }>(
      `SELECT * REPLACE (toString(cost_usd) AS cost_usd, toString(cost_computed_usd) AS cost_computed_usd)
       FROM executions FINAL
       WHERE project_id = {p:String} AND started_at IN {starts:Array(DateTime64(3, 'UTC'))} AND trace_id IN {ids:Array(String)} AND sign = 1
       SETTINGS do_not_merge_across_partitions_select_final = 1`,
      { p: projectId, starts: [...new Set(located.map((l) => l.started_at))], ids: located.map((l) => l.trace_id) },
      'assembly.current',
    );
    return new Map(rows.map((r) => [r.trace_id, r]));
  }

  async function assembleProject(projectId: string, traceIds: string[]): Promise<void> {
    const spansByTrace = await readSpans(projectId, traceIds);
    const current = await currentRows(projectId, traceIds);
    // One lookup per prompt reference for the whole batch (its traces mostly name the same prompts).
    const resolved = new Map<string, Promise<number | undefined>>();
    const summarizeDeps: SummarizeDeps = {
      prices: deps.prices,
      resolvePrompt(p, promptId, ref) {
        const key = `${promptId}\u0000${ref}`;
        let v = resolved.get(key);
        if (!v) resolved.set(key, (v = deps.resolvePrompt(p, promptId, ref)));
        return v;
      },
    };
    const rows: object[] = [];
    const written: TraceRef[] = [];
    const later: TraceRef[] = [];
    let laterDue = Infinity;
    for (const traceId of traceIds) {
      const spans = spansByTrace.get(traceId);
      if (!spans || !spans.some((s) => s.span_class === 'inference')) continue; // not an execution (yet)
      const root = spans.some((s) => !s.parent_span_id);
      if (!root) {
        const lastReceived = Math.max(...spans.map((s) => Date.parse(`${s.received_at.replace(' ', 'T')}Z`)));
        if (now() - lastReceived < deps.quietMs) {
          later.push({ projectId, traceId });
          laterDue = Math.min(laterDue, lastReceived + deps.quietMs);
          continue;
        }
      }
      const summary = await summarizeTrace(projectId, spans, summarizeDeps);
      const stored = current.get(traceId);
      if (stored && (stored.source !== 'otlp' || stored.content_hash === summary.content_hash)) {
        // The same content, or a direct record of this trace id (a direct record is never replaced by spans).
        written.push({ projectId, traceId });
        continue;
      }
      const { hasRoot: _r, ...row } = summary;
      const version = stored ? Number(stored.version) + 1 : 1;
      if (stored) rows.push({ ...stored, sign: -1 });
      rows.push({ ...row, version, sign: 1, received_at: toClickHouseTime(new Date(now())) });
      written.push({ projectId, traceId });
    }
    if (rows.length > 0) {
      const bytes = rows.reduce<number>((n, r) => n + String((r as { conversation_history?: string }).conversation_history ?? '').length + 1024, 0);
      await deps.executionsWriter.write(rows, bytes);
      deps.onSpendMoved?.(projectId);
    }
    await deps.pending.forgetGenAi(written);
    if (later.length > 0) {
      await deps.pending.defer(later, laterDue);
      await wake(laterDue);
    }
  }

  /** One sweep: every due trace, in batches, until none is due or the run has done its share. */
  async function sweep(): Promise<number> {
    let done = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      const due = await deps.pending.takeDue(now(), BATCH_TRACES);
      if (due.length === 0) return done;
      try {
        const byProject = new Map<string, string[]>();
        for (const t of due) {
          let ids = byProject.get(t.projectId);
          if (!ids) byProject.set(t.projectId, (ids = []));
          ids.push(t.traceId);
        }
        for (const [projectId, ids] of byProject) await assembleProject(projectId, ids);
        done += due.length;
      } catch (err) {
        // Nothing is lost: the traces go back, due again shortly, and the job's retry or the next sweep takes them.
        const retryAt = now() + 1_000;
        await deps.pending.defer(due, retryAt);
        await wake(retryAt);
        throw err;
      } finally {
        await deps.pending.release(due);
      }
    }
    const next = await deps.pending.nextDue();
    if (next !== undefined) await wake(Math.max(next, now()));
    return done;
  }

  /**
   * After a restart of a process whose pending traces lived in its memory: marks the traces that
   * received generative-AI spans since `sinceMs` and whose execution is missing or older than
   * their last span. Assembly is idempotent, so marking too many costs only work.
   */
  async function recover(sinceMs: number, limit = 100_000): Promise<number> {
    const since = toClickHouseTime(new Date(sinceMs));
    const [candidates, assembled] = await Promise.all([
      deps.clickhouse.query<{ project_id: string; trace_id: string; last: string }>(
        `SELECT project_id, trace_id, max(received_at) AS last FROM spans
         WHERE received_at >= toDateTime64({since:String}, 3, 'UTC')
         GROUP BY project_id, trace_id HAVING countIf(span_class = 'inference') > 0 LIMIT {limit:UInt32}`,
        { since, limit },
        'assembly.recover.spans',
      ),
      deps.clickhouse.query<{ project_id: string; trace_id: string; at: string }>(
        `SELECT project_id, trace_id, max(received_at) AS at FROM executions
         WHERE received_at >= toDateTime64({since:String}, 3, 'UTC') AND source = 'otlp' AND sign = 1
         GROUP BY project_id, trace_id`,
        { since },
        'assembly.recover.executions',
      ),
    ]);
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

  return { processor, wake, sweep, recover };
}

export type Assembler = ReturnType<typeof createAssembler>;
