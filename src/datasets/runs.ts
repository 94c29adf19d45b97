// Experiment runs (docs/datasets.md): a run of a dataset names the prompt versions and model it
// tests; code runs the items and links each to the execution it produced — by API (an item id
// and a trace id, or a failure with its error) or by span attributes at ingest
// (traceloom.dataset.run_id, traceloom.dataset.item_id; ingest/mapping/dataset-links.ts). A link
// keeps the item version current when it was made (or the one named). No Koa here.
import crypto from 'node:crypto';
import { unprocessable } from '../errors.ts';
import type { DatasetRepository } from './dataset-repository.ts';
import { cursor } from './datasets.ts';
import { joinLinks, presentRunItems, runTotals, type RunReadDeps } from './run-results.ts';
import type { RunInput, RunLink, RunRepository, RunRow } from './run-repository.ts';

export const MAX_LINKS_PER_REQUEST = 1_000;

export interface RunItemInput {
  item_id: string;
  trace_id?: string;
  status?: 'done' | 'failed';
  error?: string;
  /** The item version the run used; the current one when absent. */
  item_version?: number;
}

/** A link as a span states it (ingest/mapping/dataset-links.ts). */
export interface SpanRunLink {
  traceId: string;
  runId: string;
  itemId: string;
}

export function presentRun(r: RunRow) {
  return {
    run_id: r.run_id,
    dataset_id: r.dataset_id,
    name: r.name,
    description: r.description,
    prompts: r.prompts,
    model: r.model,
    metadata: r.metadata,
    created_at: r.created_at.toISOString(),
  };
}

export interface RunDeps extends Omit<RunReadDeps, 'versionsOf'> {
  runs: RunRepository;
  items: DatasetRepository;
}

export function createRuns(deps: RunDeps) {
  const reads: RunReadDeps = { ...deps, versionsOf: (p, pairs) => deps.items.versionsOf(p, pairs) };

  return {
    async create(projectId: string, datasetId: string, input: RunInput) {
      await deps.items.getDataset(projectId, datasetId);
      const seen = new Set<string>();
      (input.prompts ?? []).forEach((p, i) => {
        const key = `${p.prompt_id}\u0000${p.version}`;
        if (seen.has(key)) throw unprocessable(`prompts[${i}]: repeats ${p.prompt_id} version ${p.version}`);
        seen.add(key);
      });
      return presentRun(await deps.runs.create(projectId, datasetId, crypto.randomUUID(), input));
    },

    async list(projectId: string, datasetId: string, q: { limit: number; cursor?: string }) {
      await deps.items.getDataset(projectId, datasetId);
      const rows = await deps.runs.list(projectId, datasetId, q.limit, cursor.decode(q.cursor));
      const last = rows[rows.length - 1];
      return { items: rows.map(presentRun), next_cursor: rows.length === q.limit && last ? cursor.encode(last.seq) : null };
    },

    /**
     * The runs (of any dataset) that test a prompt version, newest first: the version comparison
     * links each group to them. The caller checks that the prompt version exists (404 otherwise).
     */
    async ofPromptVersion(projectId: string, promptId: string, version: number, q: { limit: number; cursor?: string }) {
      const rows = await deps.runs.withPrompt(projectId, { prompt_id: promptId, version }, q.limit, cursor.decode(q.cursor));
      const last = rows[rows.length - 1];
      return { items: rows.map(presentRun), next_cursor: rows.length === q.limit && last ? cursor.encode(last.seq) : null };
    },

    async remove(projectId: string, datasetId: string, runId: string) {
      await deps.runs.remove(projectId, datasetId, runId);
    },

    /** The run, its totals over every linked item, and a page of its items (dataset order). */
    async get(projectId: string, datasetId: string, runId: string, q: { limit: number; cursor?: string }) {
      const run = await deps.runs.get(projectId, runId, datasetId);
      const afterSeq = cursor.decode(q.cursor);
      const [all, page, datasetItems] = await Promise.all([
        deps.runs.links(projectId, runId),
        deps.runs.links(projectId, runId, { limit: q.limit, afterSeq }),
        deps.items.liveItemCount(projectId, datasetId),
      ]);
      const [joined, items] = await Promise.all([joinLinks(reads, projectId, all, false), presentRunItems(reads, projectId, page)]);
      const last = page[page.length - 1];
      return {
        ...presentRun(run),
        totals: { dataset_items: datasetItems, ...runTotals(all, joined) },
        items,
        next_cursor: page.length === q.limit && last ? cursor.encode(last.item_seq) : null,
      };
    },

    /** Links items of a run by API, all or none; a bad one is named by its index. */
    async link(projectId: string, datasetId: string, runId: string, inputs: RunItemInput[], prefix: (i: number) => string) {
      if (inputs.length > MAX_LINKS_PER_REQUEST)
        throw unprocessable(`items: at most ${MAX_LINKS_PER_REQUEST} in one request, got ${inputs.length}`);
      await deps.runs.get(projectId, runId, datasetId);
      const current = await deps.items.currentVersions(
        projectId,
        datasetId,
        inputs.map((l) => l.item_id),
      );
      const seen = new Map<string, number>();
      const links: RunLink[] = inputs.map((l, i) => {
        const at = current.get(l.item_id);
        if (!at) throw unprocessable(`${prefix(i)}item_id: ${l.item_id} is not an item of this dataset`);
        const first = seen.get(l.item_id);
        if (first !== undefined) throw unprocessable(`${prefix(i)}item_id: repeats ${prefix(first)}item_id`);
        seen.set(l.item_id, i);
        const status = l.status ?? 'done';
        if (status === 'done' && !l.trace_id)
          throw unprocessable(`${prefix(i)}trace_id: a done item needs the trace_id of the execution it produced`);
        if (l.item_version !== undefined && l.item_version > at.version)
          throw unprocessable(`${prefix(i)}item_version: the item has no version ${l.item_version} (its latest is ${at.version})`);
        return {
          item_id: l.item_id,
          item_version: l.item_version ?? at.version,
          item_seq: at.seq,
          trace_id: l.trace_id ?? null,
          status,
          error: l.error ?? null,
          linked_by: 'api',
        };
      });
      await deps.runs.upsertLinks(projectId, runId, links);
      return { linked: links.length };
    },

    /**
     * Links stated by span attributes, stored as the spans are ingested: each (run, item) once
     * (the last span naming it wins). A run or item that is not the project's is left out with the reason.
     */
    async linkFromSpans(projectId: string, spanLinks: readonly SpanRunLink[]): Promise<{ stored: number; rejected: string[] }> {
      const rejected: string[] = [];
      const byRun = new Map<string, Map<string, string>>();
      for (const l of spanLinks) {
        let items = byRun.get(l.runId);
        if (!items) byRun.set(l.runId, (items = new Map()));
        items.set(l.itemId, l.traceId);
      }
      const runs = new Map((await deps.runs.some(projectId, [...byRun.keys()])).map((r) => [r.run_id, r]));
      let stored = 0;
      for (const [runId, items] of byRun) {
        const run = runs.get(runId);
        if (!run) {
          rejected.push(`traceloom.dataset.run_id ${runId}: no such run in this project`);
          continue;
        }
        const current = await deps.items.currentVersions(projectId, run.dataset_id, [...items.keys()]);
        const links: RunLink[] = [];
        for (const [itemId, traceId] of items) {
          const at = current.get(itemId);
          if (!at) rejected.push(`traceloom.dataset.item_id ${itemId}: not an item of the dataset of run ${runId}`);
          else
            links.push({
              item_id: itemId,
              item_version: at.version,
              item_seq: at.seq,
              trace_id: traceId,
              status: 'done',
              error: null,
              linked_by: 'otel',
            });
        }
        await deps.runs.upsertLinks(projectId, runId, links);
        stored += links.length;
      }
      return { stored, rejected };
    },

    /**
     * The trace ids of a run's linked items, in dataset order (items that failed without an
     * execution left out): what an evaluator targeting a run scores. 404 for a run not the project's.
     */
    async runExecutions(projectId: string, runId: string): Promise<string[]> {
      await deps.runs.get(projectId, runId);
      return deps.runs.traceIds(projectId, runId);
    },

    /** 404 unless the run is a run of the dataset in the project (an evaluator's dataset_run target). */
    async checkRun(projectId: string, datasetId: string, runId: string): Promise<void> {
      await deps.runs.get(projectId, runId, datasetId);
    },

    /** The item a trace is linked to in the run, with its expected output at the version the run used. */
    async runItemOf(projectId: string, runId: string, traceId: string) {
      const link = await deps.runs.linkOfTrace(projectId, runId, traceId);
      if (!link) return undefined;
      const content = (await deps.items.versionsOf(projectId, [{ item_id: link.item_id, version: link.item_version }])).get(
        `${link.item_id}:${link.item_version}`,
      );
      return { item_id: link.item_id, expected_output: content?.expected_output ?? null };
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
