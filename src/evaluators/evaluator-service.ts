// Evaluators (docs/evaluators.md): created, read with their status (queued, done, failed and the
// last error), changed, paused and resumed, backfilled over a time range, deleted; their
// evaluations listed. An evaluator is checked whole when written: its judge prompt and label
// exist and every variable of the template has a value, its connection and its score config exist,
// its target's fields fit its kind (a dataset run target's run is a run of its dataset).
import { numberToDecimal } from '../decimal.ts';
import crypto from 'node:crypto';
import { badRequest, conflict, notFound, NotFound, unprocessable } from '../errors.ts';
import { extractVariables } from '../prompts/template.ts';
import type { PromptService } from '../prompts/service.ts';
import type { ScoreConfigs } from '../scores/score-config-repository.ts';
import type { ExecutionListing } from '../executions/execution-listing-repository.ts';
import { parseTime } from '../time.ts';
import type { Connections } from './connection-repository.ts';
import {
  DEFAULTS,
  presentEvaluator,
  type EvaluatorInput,
  type EvaluatorRow,
  type EvaluatorTarget,
  type EvaluatorUpdate,
  type RunTargets,
  type VariableSource,
  listFilterOf,
} from './evaluator.ts';
import type { EvaluationStatus, EvaluatorRepository } from './evaluator-repository.ts';
import type { EvaluationJobs } from './evaluation-jobs.ts';

/** A backfill reads at most this many executions: a wider range is refused (narrow it). */
export const MAX_BACKFILL = 100_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SOURCES = new Set(['input', 'output', 'expected_output', 'metadata']);

export interface EvaluatorServiceDeps {
  repository: EvaluatorRepository;
  connections: Connections;
  prompts: PromptService;
  scoreConfigs: ScoreConfigs;
  queries: Pick<ExecutionListing, 'list'>;
  runs: RunTargets;
  jobs: EvaluationJobs;
}

/** The target as stored: only its kind's fields, defaults applied; 400 naming a field of the other kind or a missing one. */
function targetOf(t: EvaluatorTarget): EvaluatorTarget {
  const sent = t as Partial<Record<string, unknown>>;
  const foreign = (fields: string[]) => {
    const f = fields.find((k) => sent[k] !== undefined);
    if (f) throw badRequest(`target.${f}: a target of kind ${t.kind} has no ${f}`);
  };
  if (t.kind === 'executions') {
    foreign(['dataset_id', 'run_id']);
    return { kind: 'executions', filter: t.filter ?? {}, sampling_rate: t.sampling_rate ?? 1 };
  }
  foreign(['filter', 'sampling_rate']);
  for (const f of ['dataset_id', 'run_id'] as const) if (!t[f]) throw badRequest(`target.${f}: a target of kind dataset_run needs it`);
  return { kind: 'dataset_run', dataset_id: t.dataset_id, run_id: t.run_id };
}

/** The daily judge budget as stored (exact numeric text), null for none. */
const dailyCost = (usd: number | null | undefined) => (usd === undefined || usd === null ? null : numberToDecimal(usd));

export function createEvaluatorService(deps: EvaluatorServiceDeps) {
  async function row(projectId: string, evaluatorId: string): Promise<EvaluatorRow> {
    const r = UUID.test(evaluatorId) ? await deps.repository.get(projectId, evaluatorId) : undefined;
    if (!r) throw notFound('Evaluator');
    return r;
  }
  const present = async (r: EvaluatorRow) => presentEvaluator(r, await deps.repository.counts(r.project_id, r.evaluator_id));

  /** 422 naming what the evaluator refers to that does not exist or does not fit. */
  async function check(projectId: string, r: Omit<EvaluatorRow, 'scanned_to' | 'created_at' | 'updated_at'>): Promise<void> {
    let template;
    try {
      await deps.prompts.get(projectId, r.prompt_id); // a missing prompt is named as such, not as a missing label
      template = (await deps.prompts.version(projectId, r.prompt_id, { kind: 'label', label: r.prompt_label })).template;
    } catch (err) {
      if (err instanceof NotFound)
        throw unprocessable(
          err.resource === 'prompt'
            ? `prompt_id: prompt ${r.prompt_id} does not exist`
            : `prompt_label: prompt ${r.prompt_id} has no label "${r.prompt_label}"`,
        );
      throw err;
    }
    const unmapped = extractVariables(template).filter((v) => !(v in r.variables) && !SOURCES.has(v.split('.')[0]!));
    if (unmapped.length)
      throw unprocessable(
        `variables: the judge prompt's ${unmapped.map((v) => `{{${v}}}`).join(', ')} ${unmapped.length > 1 ? 'have' : 'has'} no source (map ${unmapped.length > 1 ? 'them' : 'it'} to input, output, expected_output, metadata or metadata.<key>)`,
      );
    try {
      await deps.connections.get(projectId, r.connection_id);
    } catch (err) {
      if (err instanceof NotFound) throw unprocessable(`connection_id: model connection ${r.connection_id} does not exist`);
      throw err;
    }
    if (r.target.kind === 'dataset_run') {
      const { dataset_id, run_id } = r.target;
      await deps.runs.checkRun(projectId, dataset_id, run_id).catch((err: unknown) => {
        if (err instanceof NotFound) throw unprocessable(`target.run_id: ${run_id} is not a run of dataset ${dataset_id} in this project`);
        throw err;
      });
    }
    if (!(await deps.scoreConfigs.liveByName(projectId, [r.score_name])).has(r.score_name))
      throw unprocessable(`score_name: no live score config named "${r.score_name}" (create one: the judge's scores are held to it)`);
  }

  const gone = (runId: string) => (err: unknown) => {
    if (err instanceof NotFound) throw unprocessable(`target.run_id: run ${runId} no longer exists in this project`);
    throw err;
  };

  const taken = (name: string) => (err: { code?: string }) => {
    if (err.code === '23505') throw conflict(`name: an evaluator named "${name}" exists in this project`);
    throw err;
  };

  return {
    async create(projectId: string, input: EvaluatorInput) {
      const r = {
        evaluator_id: crypto.randomUUID(),
        project_id: projectId,
        name: input.name,
        prompt_id: input.prompt_id,
        prompt_label: input.prompt_label ?? DEFAULTS.prompt_label,
        variables: input.variables ?? {},
        connection_id: input.connection_id,
        score_name: input.score_name,
        agent_id: input.agent_id ?? `evaluator:${input.name}`,
        target: targetOf(input.target),
        concurrency: input.concurrency ?? DEFAULTS.concurrency,
        max_calls_per_minute: input.max_calls_per_minute ?? DEFAULTS.max_calls_per_minute,
        timeout_ms: input.timeout_ms ?? DEFAULTS.timeout_ms,
        paused: input.paused ?? false,
        max_daily_cost_usd: dailyCost(input.max_daily_cost_usd),
      };
      await check(projectId, r);
      return present(await deps.repository.insert(r).catch(taken(r.name)));
    },

    async list(projectId: string) {
      return { items: await Promise.all((await deps.repository.list(projectId)).map(present)) };
    },

    async get(projectId: string, evaluatorId: string) {
      return present(await row(projectId, evaluatorId));
    },

    async update(projectId: string, evaluatorId: string, input: EvaluatorUpdate) {
      const current = await row(projectId, evaluatorId);
      const next: EvaluatorRow = { ...current };
      for (const [k, v] of Object.entries(input)) if (v !== undefined) (next as unknown as Record<string, unknown>)[k] = v;
      if (input.target) next.target = targetOf(input.target);
      if (input.max_daily_cost_usd !== undefined) next.max_daily_cost_usd = dailyCost(input.max_daily_cost_usd);
      await check(projectId, next);
      const saved = await deps.repository.update(next).catch(taken(next.name));
      if (!saved) throw notFound('Evaluator');
      if (current.paused && !saved.paused) await deps.jobs.requeue(saved, new Date());
      return present(saved);
    },

    /** Paused: no new judgement starts (queued ones wait); resumed: they are enqueued again. */
    async setPaused(projectId: string, evaluatorId: string, paused: boolean) {
      const current = await row(projectId, evaluatorId);
      const saved = await deps.repository.update({ ...current, paused });
      if (!saved) throw notFound('Evaluator'); // deleted since it was read
      if (current.paused && !paused) await deps.jobs.requeue(saved, new Date());
      return present(saved);
    },

    async remove(projectId: string, evaluatorId: string): Promise<void> {
      await row(projectId, evaluatorId);
      if (!(await deps.repository.remove(projectId, evaluatorId))) throw notFound('Evaluator');
    },

    /**
     * Queues the target's executions started in [start, end) (sampled, each at most once); a
     * dataset run's every linked execution now (the range does not apply: a run is finite).
     */
    async backfill(projectId: string, evaluatorId: string, range: { start: string; end: string }) {
      const ev = await row(projectId, evaluatorId);
      const start = parseTime(range.start, 'start');
      const end = parseTime(range.end, 'end');
      if (end <= start) throw badRequest('end: must be after start');
      if (ev.target.kind === 'executions') {
        const { total } = await deps.queries.list(projectId, {
          ...listFilterOf(ev.target.filter),
          start: start.toISOString(),
          end: end.toISOString(),
          limit: 1,
          offset: 0,
        });
        if (total > MAX_BACKFILL)
          throw unprocessable(`start, end: ${total} executions match, more than ${MAX_BACKFILL} in one backfill; narrow the range`);
      } else {
        const linked = (await deps.runs.runExecutions(projectId, ev.target.run_id).catch(gone(ev.target.run_id))).length;
        if (linked > MAX_BACKFILL)
          throw unprocessable(`target.run_id: the run has ${linked} linked executions, more than ${MAX_BACKFILL} in one backfill`);
      }
      return { ...(await deps.jobs.queueRange(ev, start, end)), start: start.toISOString(), end: end.toISOString() };
    },

    async evaluations(projectId: string, evaluatorId: string, q: { status?: EvaluationStatus; limit: number; cursor?: string }) {
      await row(projectId, evaluatorId);
      const { rows, next_cursor } = await deps.repository.evaluationPage(projectId, evaluatorId, q);
      return {
        items: rows.map((r) => ({
          trace_id: r.trace_id,
          status: r.status,
          attempts: r.attempts,
          score_id: r.score_id,
          judge_trace_id: r.judge_trace_id,
          error: r.error,
          created_at: r.created_at.toISOString(),
          updated_at: r.updated_at.toISOString(),
        })),
        next_cursor,
      };
    },
  };
}

export type EvaluatorService = ReturnType<typeof createEvaluatorService>;

export type { VariableSource };
