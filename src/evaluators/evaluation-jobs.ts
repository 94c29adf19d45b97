// The evaluators' jobs (docs/evaluators.md, "Jobs"): `evaluators.scan` (every
// EVALUATOR_SCAN_INTERVAL_MS) finds new executions for the live evaluators, queues the sampled ones
// and re-enqueues queued evaluations whose job was lost; `evaluators.judge` runs one judgement,
// EVALUATOR_CONCURRENCY at once per node, retried by the job runner with backoff on 429, 5xx,
// timeouts and connection errors, and reported failed (with its last error) after its attempts.
import type { Logger } from '../logger.ts';
import { backoffDelay, type JobProcessor, type JobRunner } from '../jobs/runner.ts';
import { listFilterOf, type EvaluatorRow, type RunTargets } from './evaluator.ts';
import type { EvaluatorRepository } from './evaluator-repository.ts';
import { JUDGE_TRACE_PREFIX, sampled, textOf, type JudgedItem } from './judged-item.ts';
import { executionItem, judge, type JudgementDeps } from './judgement.ts';

export const SCAN_JOB = 'evaluators.scan';
export const JUDGE_JOB = 'evaluators.judge';

export interface JudgeJob {
  projectId: string;
  evaluatorId: string;
  traceId: string;
}

/** Queued evaluations untouched this long are re-enqueued by the scan (a job lost with its process). */
const STALE_MS = 10 * 60_000;
const QUEUE_BATCH = 1_000;

export interface EvaluationJobsDeps extends JudgementDeps {
  repository: EvaluatorRepository;
  runs: RunTargets;
  jobs: Pick<JobRunner, 'enqueue'>;
  logger: Logger;
  config: { scanIntervalMs: number; scanLookbackMs: number; concurrency: number; attempts: number; backoffMs: number };
  now?: () => Date;
}

export function createEvaluationJobs(deps: EvaluationJobsDeps) {
  const now = deps.now ?? (() => new Date());

  const enqueue = async (projectId: string, evaluatorId: string, traceIds: string[]) => {
    for (const traceId of traceIds)
      await deps.jobs.enqueue<JudgeJob>(
        JUDGE_JOB,
        { projectId, evaluatorId, traceId },
        { jobId: `${projectId}:${evaluatorId}:${traceId}` },
      );
  };

  /**
   * Queues the sampled ones of these traces of `ev`'s target (never a judge's own call); returns
   * how many there were, were sampled, and were newly queued (the others were queued before).
   */
  async function queueTraces(ev: EvaluatorRow, traceIds: AsyncIterable<string> | Iterable<string>, samplingRate: number) {
    let matched = 0;
    let sampledCount = 0;
    let queued = 0;
    let batch: string[] = [];
    const flush = async () => {
      const fresh = await deps.repository.queue(ev.project_id, ev.evaluator_id, batch);
      queued += fresh.length;
      batch = [];
      if (!ev.paused) await enqueue(ev.project_id, ev.evaluator_id, fresh);
    };
    for await (const traceId of traceIds) {
      if (traceId.startsWith(JUDGE_TRACE_PREFIX)) continue; // never judge a judge
      matched++;
      if (!sampled(ev.evaluator_id, traceId, samplingRate)) continue;
      sampledCount++;
      batch.push(traceId);
      if (batch.length >= QUEUE_BATCH) await flush();
    }
    if (batch.length) await flush();
    return { matched, sampled: sampledCount, queued };
  }

  /**
   * Queues the executions of `ev`'s target started in [start, end) that it samples (a backfill).
   * A dataset run is finite and has no sampling: every execution linked to it, whatever the range.
   */
  async function queueRange(ev: EvaluatorRow, start: Date, end: Date | undefined) {
    const target = ev.target;
    if (target.kind === 'dataset_run') return queueTraces(ev, new Set(await deps.runs.runExecutions(ev.project_id, target.run_id)), 1);
    const range = { start: start.toISOString(), ...(end ? { end: end.toISOString() } : {}) };
    const ids = async function* () {
      for await (const e of deps.queries.export(ev.project_id, { ...listFilterOf(target.filter), ...range })) yield e.trace_id;
    };
    return queueTraces(ev, ids(), target.sampling_rate);
  }

  /** What the judge sees of one target item, by the kind of target (a dataset run's adds its item's expected output). */
  async function itemOf(ev: EvaluatorRow, traceId: string) {
    switch (ev.target.kind) {
      case 'executions':
        return executionItem(deps, ev.project_id, traceId);
      case 'dataset_run': {
        // Relinked to another execution since it was queued: nothing of the run to judge any more.
        const runItem = await deps.runs.runItemOf(ev.project_id, ev.target.run_id, traceId);
        const item = runItem && (await executionItem(deps, ev.project_id, traceId));
        return item && { ...item, expected_output: textOf(runItem.expected_output) };
      }
    }
  }

  async function scanOne(ev: EvaluatorRow): Promise<void> {
    const at = now();
    // New executions only, by arrival (when the service stored them), not by start (a client's
    // clock: a trace started before the evaluator existed may arrive long after). From the
    // evaluator's creation, and a lookback before the last scan for rows stamped before they
    // became visible (a buffered or retried write, another node's clock).
    const from = ev.scanned_to
      ? new Date(Math.max(ev.created_at.getTime(), ev.scanned_to.getTime() - deps.config.scanLookbackMs))
      : ev.created_at;
    const target = ev.target;
    if (target.kind === 'executions')
      await queueTraces(ev, deps.queries.arrivedSince(ev.project_id, listFilterOf(target.filter), from), target.sampling_rate);
    else await queueRange(ev, from, undefined);
    await deps.repository.setScannedTo(ev.project_id, ev.evaluator_id, at);
    await requeue(ev, new Date(at.getTime() - STALE_MS));
  }

  /** Enqueues the queued evaluations of `ev` untouched since `before` (a resume, a lost job). */
  async function requeue(ev: EvaluatorRow, before: Date): Promise<number> {
    const ids = await deps.repository.queuedSince(ev.project_id, ev.evaluator_id, before, 10_000);
    await enqueue(ev.project_id, ev.evaluator_id, ids);
    return ids.length;
  }

  const scan: JobProcessor = {
    name: SCAN_JOB,
    attempts: 1,
    async process() {
      for (const ev of await deps.repository.scannable()) {
        try {
          await scanOne(ev);
        } catch (err) {
          deps.logger.warn({ evaluator_id: ev.evaluator_id, err: { message: (err as Error).message } }, 'evaluator scan failed');
        }
      }
    },
  };

  const judgeProcessor: JobProcessor<JudgeJob> = {
    name: JUDGE_JOB,
    attempts: deps.config.attempts,
    backoffMs: deps.config.backoffMs,
    concurrency: deps.config.concurrency,
    async process({ projectId, evaluatorId, traceId }, ctx) {
      const ev = await deps.repository.get(projectId, evaluatorId);
      const evaluation = ev && (await deps.repository.evaluation(projectId, evaluatorId, traceId));
      // Gone, already ended, or paused (it stays queued: a resume enqueues it again).
      if (!ev || evaluation?.status !== 'queued' || ev.paused) return;
      const outcome = await judge(deps, ev, traceId, await itemOf(ev, traceId));
      if (outcome.kind === 'retry') {
        if (ctx.attempt < deps.config.attempts) {
          await deps.repository.attemptFailed(projectId, evaluatorId, traceId, outcome.error);
          throw new Error(outcome.error); // the runner retries it after its backoff
        }
        await deps.repository.finish(projectId, evaluatorId, traceId, {
          status: 'failed',
          error: `${outcome.error} (after ${ctx.attempt} attempts)`,
        });
        return;
      }
      await deps.repository.finish(
        projectId,
        evaluatorId,
        traceId,
        outcome.kind === 'done'
          ? { status: 'done', scoreId: outcome.scoreId, judgeTraceId: outcome.judgeTraceId }
          : { status: 'failed', error: outcome.error, judgeTraceId: outcome.judgeTraceId },
      );
    },
  };

  /**
   * Judges one item of an experiment now (src/datasets/experiment-driver.ts): queued in the evaluations first, so an
   * execution an evaluator ended already is not judged again (its state is answered), then judged
   * with up to `attempts` tries on 429, 5xx and timeouts. `onCost` learns each recorded judge call's cost.
   */
  async function judgeItem(
    projectId: string,
    evaluatorId: string,
    traceId: string,
    item: JudgedItem,
    o: { attempts: number; backoffMs: number; signal?: AbortSignal; onCost(costNanos: bigint): void },
  ): Promise<{ status: 'done' | 'failed' | 'queued'; error: string | null }> {
    const ev = await deps.repository.get(projectId, evaluatorId);
    if (!ev) return { status: 'failed', error: `evaluator ${evaluatorId} no longer exists` };
    await deps.repository.queue(projectId, evaluatorId, [traceId]);
    for (let attempt = 1; ; attempt++) {
      const evaluation = await deps.repository.evaluation(projectId, evaluatorId, traceId);
      if (evaluation && evaluation.status !== 'queued') return { status: evaluation.status, error: evaluation.error };
      const outcome = await judge(deps, ev, traceId, item, o.onCost);
      if (outcome.kind === 'retry' && attempt < o.attempts && !o.signal?.aborted) {
        await deps.repository.attemptFailed(projectId, evaluatorId, traceId, outcome.error);
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(o.backoffMs, attempt)));
        continue;
      }
      // Stopped between attempts (the process closes): left queued, judged when the experiment resumes.
      if (outcome.kind === 'retry' && attempt < o.attempts) return { status: 'queued', error: outcome.error };
      const end =
        outcome.kind === 'done'
          ? ({ status: 'done', scoreId: outcome.scoreId, judgeTraceId: outcome.judgeTraceId } as const)
          : outcome.kind === 'failed'
            ? ({ status: 'failed', error: outcome.error, ...(outcome.judgeTraceId ? { judgeTraceId: outcome.judgeTraceId } : {}) } as const)
            : ({ status: 'failed', error: `${outcome.error} (after ${attempt} attempts)` } as const);
      await deps.repository.finish(projectId, evaluatorId, traceId, end);
      return { status: end.status, error: end.status === 'failed' ? end.error : null };
    }
  }

  return {
    processors: (): JobProcessor[] => [scan, judgeProcessor as JobProcessor],
    judgeItem,
    async schedule(runner: JobRunner): Promise<void> {
      await runner.every(SCAN_JOB, deps.config.scanIntervalMs, {});
    },
    queueRange,
    requeue,
  };
}

export type EvaluationJobs = ReturnType<typeof createEvaluationJobs>;
