// Experiments run by the service (docs/datasets.md, "Experiments run by the service"): a prompt
// version (a number, `latest` or a label, pinned to its number) × a dataset (its live items pinned
// at their current versions) × a model connection × evaluators and deterministic checks. Creating
// one checks everything it names (a refusal spends nothing), makes its dataset run (so runs'
// answers, comparisons and gates read it like any run) and queues it; experiment-driver.ts runs it.
// Progress, cancel and resume are here. No Koa here.
import crypto from 'node:crypto';
import { conflict, NotFound, notFound, unprocessable } from '../errors.ts';
import { fromScaled, NANOS, numberToDecimal, toScaled } from '../decimal.ts';
import { parseVersionRef } from '../prompts/prompt-input.ts';
import type { PromptService } from '../prompts/service.ts';
import type { ScoreConfigs } from '../scores/score-config-repository.ts';
import type { Connections } from '../evaluators/connection-repository.ts';
import type { EvaluatorService } from '../evaluators/evaluator-service.ts';
import type { DatasetRepository } from './dataset-repository.ts';
import { cursor } from './datasets.ts';
import type { Runs } from './runs.ts';
import { checkName, validateChecks, type Check } from './experiment-checks.ts';
import type { ExperimentItemRow, ExperimentRepository, ExperimentRow, ItemCounts } from './experiment-repository.ts';
import type { ExperimentDriver } from './experiment-driver.ts';

export interface ExperimentInput {
  name: string;
  description?: string;
  prompt: { prompt_id: string; version?: number | string };
  connection_id: string;
  evaluator_ids?: string[];
  checks?: Check[];
  /** Prompt variable → where it comes from in the item: input, input.<path>, expected_output, metadata.<key>. */
  variables?: Record<string, string>;
  /** Call parameters over the version's config. */
  config?: Record<string, unknown>;
  concurrency?: number;
  max_attempts?: number;
  timeout_ms?: number;
  max_cost_usd?: number;
  metadata?: Record<string, unknown>;
  /** Pin the items as they were at this time (RFC 3339) instead of now: a rerun on the same data. */
  dataset_as_of?: string;
}

export const DEFAULTS = { concurrency: 4, max_attempts: 3, timeout_ms: 60_000 };

const usd = (numeric: string) => fromScaled(toScaled(numeric, NANOS), NANOS);

export function presentExperiment(e: ExperimentRow, counts: ItemCounts) {
  return {
    experiment_id: e.experiment_id,
    dataset_id: e.dataset_id,
    run_id: e.run_id,
    name: e.name,
    prompt: { prompt_id: e.prompt_id, version: e.prompt_version },
    connection_id: e.connection_id,
    evaluator_ids: e.evaluator_ids,
    checks: e.checks,
    variables: e.variables,
    config: e.config,
    dataset_as_of: (e.dataset_as_of ?? e.created_at).toISOString(),
    concurrency: e.concurrency,
    max_attempts: e.max_attempts,
    timeout_ms: e.timeout_ms,
    max_cost_usd: e.max_cost_usd === null ? null : usd(e.max_cost_usd),
    status: e.status,
    status_detail: e.status_detail,
    progress: { items: counts.total, pending: counts.pending, done: counts.done, failed: counts.failed, spent_usd: usd(e.spent_usd) },
    created_by: e.created_by,
    created_at: e.created_at.toISOString(),
    started_at: e.started_at?.toISOString() ?? null,
    finished_at: e.finished_at?.toISOString() ?? null,
  };
}

export function presentExperimentItem(i: ExperimentItemRow) {
  return {
    item_id: i.item_id,
    item_version: i.item_version,
    status: i.status,
    trace_id: i.trace_id,
    output: i.output,
    cost_usd: usd(i.cost_usd),
    attempts: i.attempts,
    error: i.error,
  };
}

export interface ExperimentDeps {
  repository: ExperimentRepository;
  driver: Pick<ExperimentDriver, 'enqueue'>;
  prompts: Pick<PromptService, 'version'>;
  connections: Pick<Connections, 'get'>;
  evaluators: Pick<EvaluatorService, 'get'>;
  scoreConfigs: Pick<ScoreConfigs, 'liveByName'>;
  datasets: Pick<DatasetRepository, 'getDataset'>;
  runs: Pick<Runs, 'create' | 'remove'>;
  /** Throws 402 while the project's budget blocks. */
  enforceBudget(projectId: string): Promise<void>;
}

export function createExperiments(deps: ExperimentDeps) {
  const { repository: repo } = deps;
  const present = async (e: ExperimentRow) => presentExperiment(e, (await repo.counts([e.experiment_id])).get(e.experiment_id)!);

  /** 404/422 naming what the experiment refers to that does not exist or does not fit; the version's number. */
  async function check(projectId: string, input: ExperimentInput): Promise<number> {
    let version: number;
    try {
      version = (
        await deps.prompts.version(projectId, input.prompt.prompt_id, parseVersionRef(input.prompt.version ?? 'latest', 'prompt.version'))
      ).version;
    } catch (err) {
      if (err instanceof NotFound)
        throw notFound(
          err.resource === 'version' || err.resource === 'label'
            ? `prompt.version: prompt ${input.prompt.prompt_id} has no version or label ${JSON.stringify(input.prompt.version ?? 'latest')}`
            : `prompt.prompt_id: prompt ${input.prompt.prompt_id}`,
          err.resource,
        );
      throw err;
    }
    await deps.connections.get(projectId, input.connection_id).catch((err: unknown) => {
      if (err instanceof NotFound) throw notFound(`connection_id: model connection ${input.connection_id}`, 'connection');
      throw err;
    });
    const names = new Map<string, string>();
    const claim = (name: string, by: string) => {
      const first = names.get(name);
      if (first) throw unprocessable(`${by}: writes the score "${name}", as ${first} does`);
      names.set(name, by);
    };
    const ids = input.evaluator_ids ?? [];
    for (const [i, id] of ids.entries()) {
      if (ids.indexOf(id) !== i) throw unprocessable(`evaluator_ids[${i}]: repeats evaluator_ids[${ids.indexOf(id)}]`);
      const ev = await deps.evaluators.get(projectId, id).catch((err: unknown) => {
        if (err instanceof NotFound) throw notFound(`evaluator_ids[${i}]: evaluator ${id}`, 'evaluator');
        throw err;
      });
      claim(ev.score_name, `evaluator_ids[${i}]`);
    }
    const checks = input.checks ?? [];
    validateChecks(checks);
    checks.forEach((c, i) => claim(checkName(c), `checks[${i}]`));
    const configs = await deps.scoreConfigs.liveByName(
      projectId,
      checks.map((c) => checkName(c)),
    );
    checks.forEach((c, i) => {
      const config = configs.get(checkName(c));
      if (config && config.data_type !== 'BOOLEAN')
        throw unprocessable(
          `checks[${i}].score_name: "${checkName(c)}" has a ${config.data_type} score config; a check writes BOOLEAN scores (1 passed, 0 failed)`,
        );
    });
    return version;
  }

  return {
    async create(projectId: string, datasetId: string, input: ExperimentInput, who: { createdBy: string; apiKeyId: string }) {
      await deps.datasets.getDataset(projectId, datasetId);
      const asOf = input.dataset_as_of === undefined ? undefined : new Date(input.dataset_as_of);
      if (asOf && !(asOf.getTime() <= Date.now()))
        throw unprocessable(`dataset_as_of: ${input.dataset_as_of} is in the future; pin the items as they are now by leaving it out`);
      const version = await check(projectId, input);
      await deps.enforceBudget(projectId);
      const connection = await deps.connections.get(projectId, input.connection_id);
      const run = await deps.runs.create(projectId, datasetId, {
        name: input.name,
        ...(input.description !== undefined ? { description: input.description } : {}),
        prompts: [{ prompt_id: input.prompt.prompt_id, version }],
        model: connection.model,
        metadata: { ...(input.metadata ?? {}), experiment: true },
      });
      const experimentId = crypto.randomUUID();
      let created;
      try {
        created = await repo.create(
          {
            experiment_id: experimentId,
            project_id: projectId,
            dataset_id: datasetId,
            run_id: run.run_id,
            name: input.name,
            prompt_id: input.prompt.prompt_id,
            prompt_version: version,
            connection_id: input.connection_id,
            evaluator_ids: input.evaluator_ids ?? [],
            checks: input.checks ?? [],
            variables: input.variables ?? {},
            config: input.config ?? {},
            concurrency: input.concurrency ?? DEFAULTS.concurrency,
            max_attempts: input.max_attempts ?? DEFAULTS.max_attempts,
            timeout_ms: input.timeout_ms ?? DEFAULTS.timeout_ms,
            max_cost_usd: input.max_cost_usd === undefined ? null : numberToDecimal(input.max_cost_usd),
            created_by: who.createdBy,
            api_key_id: who.apiKeyId,
          },
          asOf,
        );
      } catch (err) {
        await deps.runs.remove(projectId, datasetId, run.run_id).catch(() => undefined);
        throw err;
      }
      await deps.driver.enqueue(projectId, experimentId);
      return presentExperiment(created.row, { total: created.items, pending: created.items, done: 0, failed: 0 });
    },

    async get(projectId: string, experimentId: string, datasetId?: string) {
      return present(await repo.get(projectId, experimentId, datasetId));
    },

    /** Newest first, a page at a time; of one dataset, or of the project. */
    async list(projectId: string, q: { datasetId?: string; limit: number; cursor?: string }) {
      if (q.datasetId) await deps.datasets.getDataset(projectId, q.datasetId);
      const rows = await repo.list(projectId, { ...q, beforeSeq: cursor.decode(q.cursor) });
      const counts = await repo.counts(rows.map((r) => r.experiment_id));
      const last = rows[rows.length - 1];
      return {
        items: rows.map((r) => presentExperiment(r, counts.get(r.experiment_id)!)),
        next_cursor: rows.length === q.limit && last ? cursor.encode(last.seq) : null,
      };
    },

    /** The experiment's items in dataset order, a page at a time, with each one's state. */
    async items(projectId: string, datasetId: string, experimentId: string, q: { limit: number; cursor?: string }) {
      await repo.get(projectId, experimentId, datasetId);
      const rows = await repo.items(experimentId, q.limit, cursor.decode(q.cursor));
      const last = rows[rows.length - 1];
      return { items: rows.map(presentExperimentItem), next_cursor: rows.length === q.limit && last ? cursor.encode(last.item_seq) : null };
    },

    /** Stops it: no item starts after this; those running end. 409 for one that ended. */
    async cancel(projectId: string, datasetId: string, experimentId: string) {
      const e = await repo.get(projectId, experimentId, datasetId);
      if (!(await repo.cancel(projectId, experimentId))) throw conflict(`experiment: it has ended already (${e.status})`);
      return present(await repo.get(projectId, experimentId));
    },

    /** Goes on with the items not run (capped, blocked, failed or cancelled), with a new cap when given. */
    async resume(projectId: string, datasetId: string, experimentId: string, input: { max_cost_usd?: number | null }) {
      const e = await repo.get(projectId, experimentId, datasetId);
      if (e.status === 'queued' || e.status === 'running') throw conflict(`experiment: it is ${e.status}`);
      if (
        input.max_cost_usd !== undefined &&
        input.max_cost_usd !== null &&
        toScaled(input.max_cost_usd, NANOS) <= toScaled(e.spent_usd, NANOS)
      )
        throw unprocessable(`max_cost_usd: ${input.max_cost_usd} is not above what the experiment spent ($${usd(e.spent_usd)})`);
      await deps.enforceBudget(projectId);
      const cap = input.max_cost_usd === undefined ? undefined : input.max_cost_usd === null ? null : numberToDecimal(input.max_cost_usd);
      if (!(await repo.resume(projectId, experimentId, cap))) throw conflict(`experiment: it is running again already`);
      await deps.driver.enqueue(projectId, experimentId);
      return present(await repo.get(projectId, experimentId));
    },
  };
}

export type Experiments = ReturnType<typeof createExperiments>;
