// The jobs that run experiments (docs/datasets.md, "Experiments run by the service"):
// `experiments.run` drives one experiment in the process that holds its lease — its pending items,
// `concurrency` at a time, each rendered, sent to the model (retried on 429, 5xx and timeouts),
// recorded as an execution linked to the experiment's run, checked, and judged by each evaluator
// once — and `experiments.scan` (every EXPERIMENT_SCAN_INTERVAL_MS) queues the unfinished
// experiments no process holds: never started, given up by a process that closed, or whose
// holder died (its lease expired). What an item's model call did is stored before it is judged,
// so a resumed experiment never calls the model for it again, and the evaluations table judges
// each execution once per evaluator.
//
// The cost cap: an item starts only if what the experiment spent, plus what the items in flight
// are expected to cost, plus one more item, stays within `max_cost_usd`. An item is expected to
// cost the most any item of this run cost; until one is priced, items run one at a time.
import crypto from 'node:crypto';
import { BudgetExceeded, Conflict, DomainError } from '../errors.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import type { Logger } from '../logger.ts';
import { backoffDelay, type JobProcessor, type JobRunner } from '../jobs/runner.ts';
import type { ExecutionRecorder } from '../executions/record.ts';
import type { PromptService } from '../prompts/service.ts';
import type { ChatMessage } from '../prompts/template.ts';
import type { ScoreService } from '../scores/service.ts';
import type { Connections, OpenConnection } from '../evaluators/connection-repository.ts';
import type { EvaluationJobs } from '../evaluators/evaluation-jobs.ts';
import { callJudge, type JudgeAnswer } from '../evaluators/judge-client.ts';
import { itemOfExecution, textOf } from '../evaluators/judged-item.ts';
import { recordModelCall } from '../evaluators/model-call.ts';
import type { ItemContent } from './dataset-repository.ts';
import type { Runs } from './runs.ts';
import { runCheck } from './experiment-checks.ts';
import type { ExperimentItemRow, ExperimentRepository, ExperimentRow, ExperimentStatus } from './experiment-repository.ts';

export const RUN_JOB = 'experiments.run';
export const SCAN_JOB = 'experiments.scan';
export const EXPERIMENT_AGENT = 'experiment';

export interface RunJob {
  projectId: string;
  experimentId: string;
}

export interface DriverDeps {
  repository: ExperimentRepository;
  prompts: Pick<PromptService, 'render'>;
  connections: Pick<Connections, 'open'>;
  recorder: ExecutionRecorder;
  runs: Pick<Runs, 'link'>;
  items: { versionsOf(projectId: string, pairs: Array<{ item_id: string; version: number }>): Promise<Map<string, ItemContent>> };
  scores: Pick<ScoreService, 'upsert'>;
  judgeItem: EvaluationJobs['judgeItem'];
  allowPrivate: boolean;
  jobs: Pick<JobRunner, 'enqueue'>;
  logger: Logger;
  config: { scanIntervalMs: number; leaseMs: number; drivers: number; backoffMs: number };
}

/** Why an experiment stopped starting items before its end. */
type Stop = { status: ExperimentStatus; detail: string } | { status: 'released' } | { status: 'lost' };

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The prompt's variables for an item: its input's fields (or `input` for an input that is not an object), then the mapping. */
export function variablesOf(content: ItemContent, mapping: Record<string, string>): Record<string, unknown> {
  const vars: Record<string, unknown> = isPlain(content.input) ? { ...content.input } : { input: content.input };
  const at = (root: unknown, path: string[]) => path.reduce<unknown>((v, k) => (isPlain(v) ? v[k] : undefined), root);
  for (const [name, source] of Object.entries(mapping)) {
    const [head, ...rest] = source.split('.');
    const root = head === 'input' ? content.input : head === 'expected_output' ? content.expected_output : content.metadata;
    vars[name] = at(root, rest) ?? '';
  }
  return vars;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export function createExperimentDriver(deps: DriverDeps) {
  /** This process, as the holder of the experiments it drives. */
  const owner = `${process.pid}-${crypto.randomUUID()}`;
  const { repository: repo } = deps;

  async function drive(projectId: string, experimentId: string, signal: AbortSignal): Promise<void> {
    const claimed = await repo.claim(experimentId, owner, deps.config.leaseMs);
    if (!claimed || claimed.project_id !== projectId) return;
    const e: ExperimentRow = claimed;
    const log = deps.logger.child({ experiment_id: experimentId });
    let stop: Stop | undefined;
    const stopWith = (s: Stop) => (stop ??= s);

    // The lease is renewed while the experiment runs; a cancel (or a lease lost) stops new items.
    let lastRenewal = Date.now();
    const renew = async () => {
      lastRenewal = Date.now();
      const row = await repo.claim(experimentId, owner, deps.config.leaseMs).catch((err: Error) => {
        log.warn({ err: { message: err.message } }, 'experiment lease renewal failed');
        return e; // a store hiccup: the lease still runs for a while
      });
      if (!row) stopWith({ status: 'lost' });
    };
    const keeper = setInterval(() => void renew(), Math.max(50, Math.floor(deps.config.leaseMs / 3)));
    keeper.unref();

    let conn: OpenConnection;
    try {
      conn = await deps.connections.open(projectId, e.connection_id);
    } catch (err) {
      clearInterval(keeper);
      if (!(err instanceof DomainError)) throw err;
      await repo.finish(experimentId, owner, 'failed', `model connection ${e.connection_id}: ${err.detail}`);
      return;
    }

    const pending = await repo.pendingItems(experimentId);
    const contents = new Map<string, ItemContent>();
    for (let i = 0; i < pending.length; i += 500) {
      const pairs = pending.slice(i, i + 500).map((p) => ({ item_id: p.item_id, version: p.item_version }));
      for (const [k, v] of await deps.items.versionsOf(projectId, pairs)) contents.set(k, v);
    }

    // The cost cap's reservation (see the header).
    const cap = e.max_cost_usd === null ? null : toScaled(e.max_cost_usd, NANOS);
    let spent = toScaled(e.spent_usd, NANOS);
    let inFlight = 0;
    let estimate: bigint | undefined;
    let wake: (() => void) | undefined;
    let idle: Promise<void> | undefined;
    const capDetail = () =>
      `cost cap reached: $${fromScaled(spent, NANOS)} spent of $${e.max_cost_usd}; the next item would be expected to cost $${fromScaled(estimate ?? 0n, NANOS)}`;

    /** Reserves a place for one more item, or says no (and why, in `stop`). */
    async function slot(): Promise<boolean> {
      for (;;) {
        if (signal.aborted) stopWith({ status: 'released' });
        if (Date.now() - lastRenewal > 500) await renew();
        if (stop) return false;
        if (cap !== null) {
          if (spent >= cap) return (stopWith({ status: 'capped', detail: capDetail() }), false);
          const waitFor = estimate === undefined ? inFlight > 0 : spent + BigInt(inFlight + 1) * estimate > cap;
          if (estimate !== undefined && spent + estimate > cap) return (stopWith({ status: 'capped', detail: capDetail() }), false);
          if (waitFor) {
            idle ??= new Promise<void>((resolve) => (wake = resolve));
            await idle;
            continue;
          }
        }
        inFlight++;
        return true;
      }
    }

    let next = 0;
    const worker = async () => {
      while (next < pending.length && (await slot())) {
        const item = pending[next++];
        let cost = 0n;
        let priced = false;
        try {
          if (!item) return;
          const r = await runItem(e, conn, item, contents.get(`${item.item_id}:${item.item_version}`), signal, stopWith);
          cost = r.cost;
          priced = r.priced;
        } catch (err) {
          log.error(
            { err: { message: (err as Error).message }, item_id: item?.item_id },
            'experiment item failed on a store; left pending',
          );
          stopWith({ status: 'released' });
        } finally {
          inFlight--;
          spent += cost;
          if (priced && (estimate === undefined || cost > estimate)) estimate = cost;
          const w = wake;
          idle = wake = undefined;
          w?.();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(e.concurrency, Math.max(1, pending.length)) }, worker));
    } finally {
      clearInterval(keeper);
    }
    const s = stop as Stop | undefined;
    if (!s) await repo.finish(experimentId, owner, 'done', null);
    else if (s.status === 'released') await repo.release(experimentId, owner);
    else if (s.status !== 'lost') await repo.finish(experimentId, owner, s.status, s.detail);
  }

  /** Calls the model, with up to `max_attempts` tries on 429, 5xx, timeouts and connection errors. */
  async function callModel(e: ExperimentRow, conn: OpenConnection, messages: ChatMessage[], config: object, signal: AbortSignal) {
    for (let attempt = 1; ; attempt++) {
      const answer: JudgeAnswer = await callJudge({
        baseUrl: conn.baseUrl,
        apiKey: conn.apiKey,
        model: conn.model,
        messages,
        params: { ...config, ...e.config },
        timeoutMs: e.timeout_ms,
        allowPrivate: deps.allowPrivate,
        who: 'model',
      });
      if (answer.ok || !answer.retryable || attempt >= e.max_attempts || signal.aborted) return { answer, attempts: attempt };
      await sleep(backoffDelay(deps.config.backoffMs, attempt), signal);
    }
  }

  /** The checks of one answer as BOOLEAN scores, each with an id of its own (written again, the same score). */
  async function writeChecks(e: ExperimentRow, itemId: string, traceId: string, output: string, expected: unknown) {
    const results = e.checks.flatMap((c) => runCheck(c, output, expected) ?? []);
    if (results.length === 0) return;
    await deps.scores.upsert(
      e.project_id,
      results.map((r) => ({
        id: `tl-check-${crypto.createHash('sha256').update(`${e.experiment_id}\u0000${itemId}\u0000${r.name}`).digest('hex').slice(0, 32)}`,
        trace_id: traceId,
        name: r.name,
        value: r.value,
        data_type: 'BOOLEAN' as const,
        comment: r.comment,
        source: 'eval' as const,
      })),
      `experiment:${e.experiment_id}`,
      (i) => `checks[${i}]: `,
    );
  }

  /**
   * One item: its model call (unless recorded before), its checks, its judges. Returns what it
   * cost and whether a model call was priced in this run (what the cap's estimate learns from).
   */
  async function runItem(
    e: ExperimentRow,
    conn: OpenConnection,
    item: ExperimentItemRow,
    content: ItemContent | undefined,
    signal: AbortSignal,
    stopWith: (s: Stop) => void,
  ): Promise<{ cost: bigint; priced: boolean }> {
    const projectId = e.project_id;
    const fail = async (error: string, cost = 0n) => {
      await repo.ended(e.experiment_id, item.item_id, { status: 'failed', error, costUsd: '0' });
      return { cost, priced: cost > 0n };
    };
    if (!content) return fail(`item version ${item.item_version} no longer exists`);
    const inputs = variablesOf(content, e.variables);
    let rendered;
    try {
      rendered = await deps.prompts.render(projectId, e.prompt_id, { kind: 'number', version: e.prompt_version }, inputs);
    } catch (err) {
      if (err instanceof BudgetExceeded) {
        stopWith({ status: 'blocked', detail: err.detail });
        return { cost: 0n, priced: false };
      }
      if (err instanceof DomainError) return fail(`prompt ${e.prompt_id} version ${e.prompt_version}: ${err.detail}`);
      throw err;
    }
    const messages: ChatMessage[] =
      'messages' in rendered && rendered.messages
        ? rendered.messages
        : [{ role: 'user', content: 'text' in rendered ? (rendered.text ?? '') : '' }];

    const judgedItem = (out: string) => ({
      ...itemOfExecution({ conversation_history: [...messages, { role: 'assistant', content: out }], metadata: {} }),
      expected_output: textOf(content.expected_output),
      metadata: Object.fromEntries(Object.entries(content.metadata ?? {}).map(([k, v]) => [k, textOf(v)])),
    });
    /** Each evaluator judges the answer once, one after another; `stopped`: the process closes between a judge's attempts. */
    const judgeAll = async (tid: string, out: string) => {
      let judgeCost = 0n;
      const errors: string[] = [];
      for (const evaluatorId of e.evaluator_ids) {
        const r = await deps.judgeItem(projectId, evaluatorId, tid, judgedItem(out), {
          attempts: e.max_attempts,
          backoffMs: deps.config.backoffMs,
          signal,
          onCost: (c) => (judgeCost += c),
        });
        if (r.status === 'queued') return { judgeCost, errors, stopped: true };
        if (r.status === 'failed') errors.push(`evaluator ${evaluatorId}: ${r.error}`);
      }
      return { judgeCost, errors, stopped: false };
    };
    const checkAndJudge = (tid: string, out: string) =>
      Promise.all([writeChecks(e, item.item_id, tid, out, content.expected_output), judgeAll(tid, out)]).then(([, j]) => j);

    let cost = 0n;
    let priced = false;
    let traceId = item.trace_id;
    let output = item.output;
    let judging: ReturnType<typeof checkAndJudge> | undefined;
    if (!traceId) {
      const started = new Date();
      const { answer, attempts } = await callModel(e, conn, messages, rendered.config, signal);
      if (!answer.ok && answer.retryable && signal.aborted) {
        stopWith({ status: 'released' });
        return { cost: 0n, priced: false }; // not recorded: the resumed experiment calls it again
      }
      const tid = `experiment-${e.experiment_id}-${item.item_seq}`;
      traceId = tid;
      output = answer.ok ? answer.content : null;
      // An answer is checked and judged while its call is recorded: each waits for its batch to be stored.
      judging = answer.ok ? checkAndJudge(tid, answer.content) : undefined;
      judging?.catch(() => undefined); // awaited below
      try {
        const { execution } = await recordModelCall(deps.recorder, projectId, {
          traceId: tid,
          agentId: EXPERIMENT_AGENT,
          connection: conn,
          answer,
          started,
          messages,
          tags: ['experiment'],
          metadata: { experiment_id: e.experiment_id, dataset_id: e.dataset_id, run_id: e.run_id, item_id: item.item_id },
          version: { prompt_id: e.prompt_id, version: e.prompt_version, inputs },
          apiKeyId: e.api_key_id,
          source: 'experiment',
        });
        cost = toScaled(execution.cost_usd, NANOS);
        priced = answer.ok;
      } catch (err) {
        // Recorded by a run of this item that stopped before storing it here: that record stands.
        if (!(err instanceof Conflict)) throw err;
      }
      await repo.called(e.experiment_id, item.item_id, { traceId: tid, output, attempts, costUsd: fromScaled(cost, NANOS) });
      const link = answer.ok
        ? { item_id: item.item_id, item_version: item.item_version, trace_id: tid, status: 'done' as const }
        : { item_id: item.item_id, item_version: item.item_version, trace_id: tid, status: 'failed' as const, error: answer.error };
      try {
        await deps.runs.link(projectId, e.dataset_id, e.run_id, [link], () => '');
      } catch (err) {
        // the item or the run was deleted meanwhile
        if (!(err instanceof DomainError)) throw err;
        const j = await judging;
        return fail(`run link: ${err.detail}`, cost + (j?.judgeCost ?? 0n));
      }
      if (!answer.ok) {
        await repo.ended(e.experiment_id, item.item_id, {
          status: 'failed',
          error: `model: ${answer.error} (after ${attempts} attempts)`,
          costUsd: '0',
        });
        return { cost, priced };
      }
    }
    if (output === null) return fail('model: no answer recorded', cost);

    const { judgeCost, errors, stopped } = await (judging ?? checkAndJudge(traceId, output));
    if (stopped) {
      // Stopped between a judge's attempts: the item stays pending, its judges resume with it.
      await repo.addCost(e.experiment_id, item.item_id, fromScaled(judgeCost, NANOS));
      stopWith({ status: 'released' });
      return { cost: cost + judgeCost, priced };
    }
    await repo.ended(e.experiment_id, item.item_id, {
      status: errors.length ? 'failed' : 'done',
      error: errors.length ? errors.join('; ') : null,
      costUsd: fromScaled(judgeCost, NANOS),
    });
    return { cost: cost + judgeCost, priced: priced || judgeCost > 0n };
  }

  const runProcessor: JobProcessor<RunJob> = {
    name: RUN_JOB,
    attempts: 1,
    concurrency: deps.config.drivers,
    async process({ projectId, experimentId }, ctx) {
      await drive(projectId, experimentId, ctx.signal);
    },
  };

  const scan: JobProcessor = {
    name: SCAN_JOB,
    attempts: 1,
    async process() {
      for (const o of await repo.orphaned(1_000)) await enqueue(o.project_id, o.experiment_id);
    },
  };

  const enqueue = (projectId: string, experimentId: string) =>
    deps.jobs.enqueue<RunJob>(RUN_JOB, { projectId, experimentId }, { jobId: `experiment:${experimentId}` });

  return {
    processors: (): JobProcessor[] => [runProcessor as JobProcessor, scan],
    async schedule(runner: JobRunner): Promise<void> {
      await runner.every(SCAN_JOB, deps.config.scanIntervalMs, {});
    },
    enqueue,
    /** Drives one experiment here and now (tests, benchmarks): what the run job does. */
    drive,
  };
}

export type ExperimentDriver = ReturnType<typeof createExperimentDriver>;
