// Datasets and experiments (docs/datasets.md): get(name) reads a dataset with all its items;
// runExperiment() creates a run and runs a task on every item, at most `concurrency` at a time,
// each inside a span when a tracer is given (an OpenTelemetry API Tracer: the task's own spans are
// its children, and the span of an item that succeeded carries traceloom.dataset.run_id / .item_id —
// not one that failed, whose link from spans, always "done", would replace the failure), and links each
// item to the execution it produced by API, with the item version it ran, in batches. A task that
// throws is a failed item; the run goes on. Nothing here imports OpenTelemetry: the tracer is
// passed in, so the package keeps no runtime dependency.
import { TraceloomApiError, TraceloomError } from './errors.ts';
import type { Http } from './http.ts';
import type { Prompt } from './prompt.ts';

export const DATASET_RUN_ID_ATTRIBUTE = 'traceloom.dataset.run_id';
export const DATASET_ITEM_ID_ATTRIBUTE = 'traceloom.dataset.item_id';

/** An item as GET .../datasets/{id}/items answers it (schema/api/DatasetItem.json). */
export interface DatasetItem {
  item_id: string;
  dataset_id: string;
  version: number;
  input: unknown;
  expected_output: unknown;
  metadata: Record<string, unknown>;
  source_trace_id: string | null;
  [field: string]: unknown;
}

/** A dataset with every live item, in the order they were added. */
export interface Dataset {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  items: DatasetItem[];
}

/** A run as the service answers it (schema/api/DatasetRun.json). */
export interface DatasetRun {
  run_id: string;
  dataset_id: string;
  name: string;
  [field: string]: unknown;
}

/** The part of an OpenTelemetry span used here (structurally @opentelemetry/api's Span). */
export interface ExperimentSpan {
  spanContext(): { traceId: string };
  setAttributes(attributes: Record<string, string>): unknown;
  recordException(exception: Error | string): void;
  setStatus(status: { code: number; message?: string }): void;
  end(): void;
}

/** The part of an OpenTelemetry Tracer used here: pass `trace.getTracer('my-experiment')`. */
export interface ExperimentTracer {
  startActiveSpan<F extends (span: ExperimentSpan) => unknown>(
    name: string,
    options: { attributes: Record<string, string> },
    fn: F,
  ): ReturnType<F>;
}

export interface ExperimentContext {
  run: DatasetRun;
  /** The item's position in the dataset (0-based). */
  index: number;
  /**
   * The trace the item is linked to: the item span's when a tracer is given. Set it to the trace
   * your task produced when there is no tracer (e.g. the trace id your own instrumentation logged).
   */
  traceId: string | undefined;
  /** traceloom.dataset.run_id / .item_id: put them on a span of the item's trace to link it from there. */
  spanAttributes: Record<string, string>;
}

export interface ExperimentOptions<O> {
  /** A dataset name, or the dataset from get(). */
  dataset: string | Dataset;
  /** The run's name, unique in the dataset (a 409 otherwise). */
  runName: string;
  description?: string;
  /** The prompt versions the run tests (Prompt from prompts.get, or a name and version). */
  prompts?: Array<Prompt | { promptId: string; version: number }>;
  model?: string;
  metadata?: Record<string, unknown>;
  /** Items run at the same time (default 4). */
  concurrency?: number;
  /** Links sent in one request (1-1,000, default 50). */
  linkBatchSize?: number;
  /** Runs each item inside a span of this tracer (see ExperimentTracer). */
  tracer?: ExperimentTracer;
  task: (item: DatasetItem, ctx: ExperimentContext) => O | Promise<O>;
}

export interface ExperimentItemResult<O> {
  itemId: string;
  itemVersion: number;
  index: number;
  status: 'done' | 'failed';
  output?: O;
  /** What the task threw (a failed item). */
  error?: unknown;
  traceId: string | null;
  /** Why the item could not be linked to the run (null when it was). */
  linkError: string | null;
}

export interface ExperimentSummary<O> {
  run: DatasetRun;
  runId: string;
  total: number;
  done: number;
  failed: number;
  /** Items whose link could not be stored (see each item's linkError). */
  unlinked: number;
  /** In dataset order. */
  items: Array<ExperimentItemResult<O>>;
}

type LinkBody = { item_id: string; item_version: number; trace_id?: string; status?: 'failed'; error?: string };

const ZERO_TRACE = /^0*$/;
const ITEM_SPAN = 'traceloom.dataset.item';
const SPAN_STATUS_ERROR = 2;

function errorText(e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.length > 4000 ? text.slice(0, 3999) + '…' : text;
}

function positiveInt(name: string, value: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new TraceloomError(`${name}: must be an integer from 1 to ${max}, got ${value}`);
  return value;
}

export class DatasetClient {
  constructor(private readonly http: Http) {}

  /** The dataset of that name with all its live items (read page by page). 404 TraceloomApiError when none. */
  async get(name: string): Promise<Dataset> {
    const found = await this.find(name);
    const items: DatasetItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.http.project<{ items: DatasetItem[]; next_cursor: string | null }>(
        'GET',
        `/datasets/${encodeURIComponent(found.dataset_id)}/items`,
        { query: { limit: '1000', cursor } },
      );
      items.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return { id: found.dataset_id, name: found.name, description: found.description, metadata: found.metadata, items };
  }

  /** Datasets are listed by name: the pages are read until the name is passed. */
  private async find(name: string) {
    type Row = { dataset_id: string; name: string; description: string | null; metadata: Record<string, unknown> };
    let cursor: string | undefined;
    do {
      const page = await this.http.project<{ items: Row[]; next_cursor: string | null }>('GET', '/datasets', {
        query: { limit: '1000', cursor },
      });
      const hit = page.items.find((d) => d.name === name);
      if (hit) return hit;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    throw new TraceloomApiError(404, `no dataset named "${name}" in this project`, 'GET /datasets');
  }

  /**
   * Creates the run and runs `task` on every item, `concurrency` at a time; resolves when every
   * item has run and every link was sent. Only creating the run (or reading the dataset) rejects.
   */
  async runExperiment<O>(o: ExperimentOptions<O>): Promise<ExperimentSummary<O>> {
    const concurrency = positiveInt('concurrency', o.concurrency ?? 4);
    const batchSize = positiveInt('linkBatchSize', o.linkBatchSize ?? 50, 1000);
    const dataset = typeof o.dataset === 'string' ? await this.get(o.dataset) : o.dataset;
    const runs = `/datasets/${encodeURIComponent(dataset.id)}/runs`;
    const run = await this.http.project<DatasetRun>('POST', runs, { body: runBody(o) });
    const results: Array<ExperimentItemResult<O>> = new Array(dataset.items.length);
    const links = new LinkQueue(batchSize, (batch) =>
      this.http.project('POST', `${runs}/${encodeURIComponent(run.run_id)}/items`, { body: batch }),
    );

    let next = 0;
    const worker = async () => {
      while (next < dataset.items.length) {
        const index = next++;
        const item = dataset.items[index]!;
        const r = await runItem(item, index, run, o);
        results[index] = r;
        if (r.traceId === null && r.status === 'done')
          r.linkError = 'no trace id: pass a tracer, or set ctx.traceId to the trace the task produced';
        else
          await links.add(
            {
              item_id: item.item_id,
              item_version: item.version,
              ...(r.traceId ? { trace_id: r.traceId } : {}),
              ...(r.status === 'failed' ? { status: 'failed' as const, error: errorText(r.error) } : {}),
            },
            (why) => (r.linkError = why),
          );
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, dataset.items.length) }, worker));
    await links.flush();
    const count = (f: (r: ExperimentItemResult<O>) => boolean) => results.filter(f).length;
    return {
      run,
      runId: run.run_id,
      total: results.length,
      done: count((r) => r.status === 'done'),
      failed: count((r) => r.status === 'failed'),
      unlinked: count((r) => r.linkError !== null),
      items: results,
    };
  }
}

function runBody(o: ExperimentOptions<unknown>) {
  const prompts = o.prompts?.map((p, i) => {
    const version = p.version;
    if (version === null) throw new TraceloomError(`prompts[${i}]: a fallback prompt is no stored version; a run cannot name it`);
    return { prompt_id: 'promptId' in p ? p.promptId : p.name, version };
  });
  const body = { name: o.runName, description: o.description, prompts, model: o.model, metadata: o.metadata };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

async function runItem<O>(item: DatasetItem, index: number, run: DatasetRun, o: ExperimentOptions<O>): Promise<ExperimentItemResult<O>> {
  const spanAttributes = { [DATASET_RUN_ID_ATTRIBUTE]: run.run_id, [DATASET_ITEM_ID_ATTRIBUTE]: item.item_id };
  const ctx: ExperimentContext = { run, index, traceId: undefined, spanAttributes };
  const base = { itemId: item.item_id, itemVersion: item.version, index, linkError: null };
  const attempt = async (span?: ExperimentSpan): Promise<ExperimentItemResult<O>> => {
    const spanTrace = span?.spanContext().traceId;
    if (spanTrace && !ZERO_TRACE.test(spanTrace)) ctx.traceId = spanTrace;
    try {
      const output = await o.task(item, ctx);
      span?.setAttributes(spanAttributes);
      return { ...base, status: 'done', output, traceId: ctx.traceId ?? null };
    } catch (error) {
      span?.recordException(error instanceof Error ? error : String(error));
      span?.setStatus({ code: SPAN_STATUS_ERROR, message: errorText(error) });
      return { ...base, status: 'failed', error, traceId: ctx.traceId ?? null };
    } finally {
      span?.end();
    }
  };
  return o.tracer ? o.tracer.startActiveSpan(ITEM_SPAN, { attributes: {} }, attempt) : attempt();
}

/**
 * Links waiting to be sent, in batches: one request in flight, a full batch sent as soon as it is
 * full, the rest by flush(). A batch refused as a whole (422: all or none) is sent again link by
 * link, so one bad link costs only itself; a link that still fails reports why to its item.
 */
class LinkQueue {
  private waiting: Array<{ link: LinkBody; failed: (why: string) => void }> = [];
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly batchSize: number,
    private readonly send: (links: LinkBody[]) => Promise<unknown>,
  ) {}

  add(link: LinkBody, failed: (why: string) => void): Promise<void> {
    this.waiting.push({ link, failed });
    return this.waiting.length >= this.batchSize ? this.flush() : Promise.resolve();
  }

  flush(): Promise<void> {
    const batch = this.waiting.splice(0);
    if (batch.length === 0) return this.inFlight;
    this.inFlight = this.inFlight.then(() => this.sendBatch(batch));
    return this.inFlight;
  }

  private async sendBatch(batch: Array<{ link: LinkBody; failed: (why: string) => void }>): Promise<void> {
    try {
      await this.send(batch.map((b) => b.link));
    } catch (e) {
      if (batch.length > 1 && e instanceof TraceloomApiError && e.status === 422) {
        for (const one of batch) await this.sendBatch([one]);
        return;
      }
      const why = e instanceof Error ? e.message : String(e);
      for (const b of batch) b.failed(why);
    }
  }
}
