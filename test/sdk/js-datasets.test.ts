// The TypeScript SDK's dataset helpers (sdk/js/src/datasets.ts) against the real service: a run
// over a dataset links every item exactly once to the execution its task produced (through the
// item span of an OpenTelemetry tracer, or a trace id the task sets), never runs more items at once
// than the bound, reports a throwing task as a failed item while the others complete, and the
// run's answer shows the items done and failed.
import { SpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { Traceloom, TraceloomApiError, type Dataset } from '../../sdk/js/src/index.ts';
import { mode } from '../helpers/env.ts';
import { jsonCaller, serviceForFile } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

const svc = serviceForFile();
const api = jsonCaller(() => `${svc().url}/api/projects/default`);

async function dataset(name: string, inputs: unknown[]): Promise<string> {
  const d = await api('POST', '/datasets', { name });
  expect(d.status, JSON.stringify(d.body)).toBe(201);
  for (let i = 0; i < inputs.length; i += 1000) {
    const r = await api(
      'POST',
      `/datasets/${d.body.dataset_id}/items`,
      inputs.slice(i, i + 1000).map((input) => ({ input })),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  return d.body.dataset_id as string;
}

/** Every link of a run (pages of 1,000), in dataset order. */
async function runItems(datasetId: string, runId: string) {
  const items: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  do {
    const r = await api('GET', `/datasets/${datasetId}/runs/${runId}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status).toBe(200);
    items.push(...r.body.items);
    cursor = r.body.next_cursor;
  } while (cursor);
  return items;
}

/** Counts the tasks running at once. */
function gauge() {
  let active = 0;
  let max = 0;
  return {
    enter: () => (max = Math.max(max, ++active)),
    leave: () => active--,
    max: () => max,
  };
}

describe(`TypeScript SDK: experiments over a dataset (${mode} mode)`, () => {
  it('with a tracer: each item runs in its span, linked once to its execution; a throwing task is a failed item', async () => {
    const questions = Array.from({ length: 12 }, (_, i) => `question ${i}`);
    const datasetId = await dataset('sdk-js-qa', questions);
    const provider = new NodeTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${svc().url}/api/v1/traces`, timeoutMillis: 10_000 }))],
    });
    provider.register();
    const tracer = provider.getTracer('sdk-experiment');
    const c = new Traceloom({ baseUrl: svc().url, projectId: 'default' });
    const ds = await c.datasets.get('sdk-js-qa');
    expect(ds).toMatchObject({ id: datasetId, name: 'sdk-js-qa', description: null });
    expect(ds.items.map((i) => i.input)).toEqual(questions);

    const g = gauge();
    const summary = await c.datasets.runExperiment({
      dataset: ds,
      runName: 'gpt-4o baseline',
      model: 'gpt-4o',
      metadata: { by: 'sdk' },
      concurrency: 3,
      linkBatchSize: 5,
      tracer,
      task: async (item, ctx) => {
        g.enter();
        try {
          await new Promise((r) => setTimeout(r, 5));
          if (ctx.index === 4) throw new Error('model refused');
          const answer = `answer to ${String(item.input)}`;
          // The agent's own GenAI span: a child of the item span, so in the item's trace.
          tracer
            .startSpan('chat gpt-4o', {
              kind: SpanKind.CLIENT,
              attributes: {
                'gen_ai.operation.name': 'chat',
                'gen_ai.request.model': 'gpt-4o',
                'gen_ai.usage.input_tokens': 10,
                'gen_ai.usage.output_tokens': 2,
                'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: item.input }] }]),
                'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: answer }] }]),
              },
            })
            .end();
          expect(trace.getActiveSpan()?.spanContext().traceId).toBe(ctx.traceId);
          return answer;
        } finally {
          g.leave();
        }
      },
    });
    await provider.forceFlush();

    expect(g.max()).toBe(3);
    expect(summary).toMatchObject({ total: 12, done: 11, failed: 1, unlinked: 0, run: { name: 'gpt-4o baseline', model: 'gpt-4o' } });
    expect(summary.items.map((r) => r.itemId)).toEqual(ds.items.map((i) => i.item_id));
    expect(summary.items[4]).toMatchObject({ status: 'failed', error: new Error('model refused'), linkError: null });
    expect(summary.items[0]).toMatchObject({ status: 'done', output: 'answer to question 0', itemVersion: 1 });
    const traceIds = summary.items.map((r) => r.traceId);
    expect(new Set(traceIds).size).toBe(12);
    expect(traceIds.every((t) => /^[0-9a-f]{32}$/.test(t!))).toBe(true);

    const result = await until(async () => {
      const r = await api('GET', `/datasets/${datasetId}/runs/${summary.runId}?limit=1000`);
      return r.body.totals.items.awaiting_execution === 0 ? r.body : undefined;
    }, 'every execution of the run assembled');
    expect(result.totals.items).toMatchObject({ linked: 12, done: 11, failed: 1 });
    expect(result.items).toHaveLength(12);
    expect(result.items.map((i: { item_id: string }) => i.item_id)).toEqual(ds.items.map((i) => i.item_id));
    result.items.forEach((link: Record<string, any>, i: number) => {
      expect(link.trace_id).toBe(traceIds[i]);
      if (i === 4) expect(link).toMatchObject({ status: 'failed', error: 'Error: model refused' });
      else expect(link).toMatchObject({ status: 'done', item_version: 1, execution: { output: `answer to question ${i}` } });
    });
    await provider.shutdown();
  });

  it('without a tracer: the trace id the task sets; items read page by page; a bad link costs only itself', async () => {
    const n = 1_005;
    const datasetId = await dataset(
      'sdk-js-large',
      Array.from({ length: n }, (_, i) => ({ i })),
    );
    const c = new Traceloom({ baseUrl: svc().url, projectId: 'default' });
    const ds = await c.datasets.get('sdk-js-large');
    expect(ds.items).toHaveLength(n);
    // An item that is not the dataset's: its link is refused (422), the batch it was in is sent again link by link.
    const stranger = { ...ds.items[0]!, item_id: '00000000-0000-4000-8000-000000000000' };
    const withStranger: Dataset = { ...ds, items: [...ds.items.slice(0, 10), stranger, ...ds.items.slice(10)] };
    const g = gauge();
    const summary = await c.datasets.runExperiment({
      dataset: withStranger,
      runName: 'by trace id',
      concurrency: 2,
      task: async (item, ctx) => {
        g.enter();
        await Promise.resolve();
        g.leave();
        const i = (item.input as { i: number }).i;
        if (i === 7) return 'no trace'; // not linked: the summary says why
        if (i === 9) throw 'not an Error';
        ctx.traceId = `task-trace-${ctx.index}`;
        return i * 2;
      },
    });
    expect(g.max()).toBe(2);
    expect(summary).toMatchObject({ total: n + 1, done: n - 1 + 1, failed: 1, unlinked: 2 });
    expect(summary.items[7]).toMatchObject({ status: 'done', output: 'no trace', traceId: null });
    expect(summary.items[7]!.linkError).toMatch(/^no trace id/);
    expect(summary.items[9]).toMatchObject({ status: 'failed', error: 'not an Error', traceId: null, linkError: null });
    expect(summary.items[10]!.linkError).toContain('is not an item of this dataset');

    const links = await runItems(datasetId, summary.runId);
    expect(links).toHaveLength(n - 1); // all but item 7
    expect(new Set(links.map((l) => l.item_id)).size).toBe(n - 1);
    const byItem = new Map(summary.items.map((r) => [r.itemId, r]));
    for (const l of links) {
      const r = byItem.get(l.item_id)!;
      expect(l.trace_id).toBe(r.traceId);
      expect(l.status).toBe(r.status);
      expect(l.linked_by).toBe('api');
    }
    const run = await api('GET', `/datasets/${datasetId}/runs/${summary.runId}?limit=1`);
    expect(run.body.totals.items).toMatchObject({ linked: n - 1, done: n - 2, failed: 1 });
  });

  it('the run is created first: a taken name or an unknown dataset rejects before any task runs', async () => {
    const c = new Traceloom({ baseUrl: svc().url, projectId: 'default' });
    let ran = 0;
    const task = () => ran++;
    await expect(c.datasets.runExperiment({ dataset: 'sdk-js-qa', runName: 'gpt-4o baseline', task })).rejects.toMatchObject({
      status: 409,
    });
    const missing = await c.datasets.get('no-such-dataset').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TraceloomApiError);
    expect(missing).toMatchObject({ status: 404, detail: 'no dataset named "no-such-dataset" in this project' });
    await expect(c.datasets.runExperiment({ dataset: 'sdk-js-qa', runName: 'x', concurrency: 0, task })).rejects.toThrow(
      'concurrency: must be an integer from 1 to',
    );
    expect(ran).toBe(0);
  });
});
