// The execution page in a real Chromium: the conversation comes first (above the fold at
// 1440×900), messages as text by role, tool calls with name and arguments, JSON that folds; then
// who and what (user and session links that navigate, environment, metadata, the API key by name,
// also in the executions list; why it failed: the root span's status message, also the API's
// error_message); a span tree of 161 spans opens folded and unfolds on a click; a root with 160
// children opens with its first 20 and a "Show 140 more spans" button; at 390 px wide nothing
// overflows sideways.
import { context, trace, SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT, startConsoleTest, type ConsoleTest } from '../helpers/console.ts';
import { until } from '../helpers/wait.ts';

let t: ConsoleTest;
let failedId: string;
let bigId: string;
let wideId: string;
let keyId: string;
const REASON = 'upstream refused: 429 rate limited';
const base = () => `${t.svc.url}/projects/${PROJECT}`;

/** A tracer exporting to the service with an API key, from a `production` deployment. */
function tracerWith(key: string) {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-service', 'deployment.environment.name': 'production' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${t.svc.url}/api/v1/traces`, headers: { 'x-api-key': key } }), {
        maxExportBatchSize: 512,
        maxQueueSize: 2048,
      }),
    ],
  });
  return { tracer: provider.getTracer('execution-page-test'), provider };
}

const chat = (extra: Attributes): Attributes => ({
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.request.model': 'gpt-4o-mini',
  'gen_ai.usage.input_tokens': 120,
  'gen_ai.usage.output_tokens': 30,
  ...extra,
});

beforeAll(async () => {
  t = await startConsoleTest({ TRACE_DEBOUNCE_MS: '50' });
  const created = await t.api('/api-keys', { method: 'POST', body: { name: 'checkout-service' } });
  expect(created.status).toBe(201);
  keyId = created.body.key_id;
  const { tracer, provider } = tracerWith(created.body.key);
  const at = (ms: number) => new Date(Date.now() - 60_000 + ms);

  // A failed agent run: the root says why; a chat call asks for a tool with JSON arguments; the
  // tool answers JSON; a second chat call fails without a message.
  const root = tracer.startSpan('invoke_agent support-agent', {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support-agent',
      'user.id': 'ada@example.com',
      'session.id': 'sess-42',
      'traceloop.association.properties.tier': 'gold',
    },
    startTime: at(0),
  });
  const ctx = trace.setSpan(context.active(), root);
  const user = { role: 'user', parts: [{ type: 'text', content: 'Where is my order 1234?' }] };
  const ask = {
    role: 'assistant',
    parts: [{ type: 'tool_call', id: 'call_7', name: 'find_order', arguments: { order_id: 1234, include: ['items', 'shipping'] } }],
  };
  tracer
    .startSpan(
      'chat gpt-4o-mini',
      {
        kind: SpanKind.CLIENT,
        attributes: chat({ 'gen_ai.input.messages': JSON.stringify([user]), 'gen_ai.output.messages': JSON.stringify([ask]) }),
        startTime: at(10),
      },
      ctx,
    )
    .end(at(500));
  tracer
    .startSpan(
      'execute_tool find_order',
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'find_order',
          'gen_ai.tool.call.id': 'call_7',
          'gen_ai.tool.call.result': JSON.stringify({ status: 'shipped', carrier: 'DHL', eta: '2026-12-01' }),
        },
        startTime: at(510),
      },
      ctx,
    )
    .end(at(700));
  const second = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT, attributes: chat({}), startTime: at(710) }, ctx);
  second.setStatus({ code: SpanStatusCode.ERROR });
  second.end(at(900));
  root.setStatus({ code: SpanStatusCode.ERROR, message: REASON });
  root.end(at(1_000));
  failedId = root.spanContext().traceId;

  // A big trace: a root, 8 steps of 19 spans each (one chat call per step): 161 spans.
  const bigRoot = tracer.startSpan('invoke_agent batch-agent', { attributes: { 'gen_ai.agent.name': 'batch-agent' }, startTime: at(0) });
  const bigCtx = trace.setSpan(context.active(), bigRoot);
  for (let s = 0; s < 8; s++) {
    const step = tracer.startSpan(`step ${s}`, { startTime: at(s * 100) }, bigCtx);
    const stepCtx = trace.setSpan(context.active(), step);
    for (let c = 0; c < 19; c++) {
      const attributes = c === 0 ? chat({}) : { 'db.system': 'postgresql' };
      tracer
        .startSpan(c === 0 ? 'chat gpt-4o-mini' : `query ${c}`, { attributes, startTime: at(s * 100 + c * 5) }, stepCtx)
        .end(at(s * 100 + c * 5 + 4));
    }
    step.end(at(s * 100 + 99));
  }
  bigRoot.end(at(900));
  bigId = bigRoot.spanContext().traceId;

  // A wide trace: a root with 160 direct children (the first a chat call): 161 spans, one level.
  const wideRoot = tracer.startSpan('invoke_agent fan-out-agent', {
    attributes: { 'gen_ai.agent.name': 'fan-out-agent' },
    startTime: at(0),
  });
  const wideCtx = trace.setSpan(context.active(), wideRoot);
  for (let c = 0; c < 160; c++) {
    const attributes = c === 0 ? chat({}) : { 'db.system': 'postgresql' };
    tracer.startSpan(`fetch ${c}`, { attributes, startTime: at(c * 5) }, wideCtx).end(at(c * 5 + 4));
  }
  wideRoot.end(at(900));
  wideId = wideRoot.spanContext().traceId;

  await provider.forceFlush();
  await provider.shutdown();
  await until(async () => (await t.api(`/executions/${failedId}`)).body?.span_count === 4, 'the failed trace as an execution');
  await until(async () => (await t.api(`/executions/${bigId}`)).body?.span_count === 161, 'the big trace as an execution');
  await until(async () => (await t.api(`/executions/${wideId}`)).body?.span_count === 161, 'the wide trace as an execution');
});

afterAll(async () => {
  await t?.close();
});

describe('the execution page', () => {
  it("the API names why it failed (the root span's status message) and the key that sent it", async () => {
    const e = (await t.api(`/executions/${failedId}`)).body;
    expect(e).toMatchObject({
      status: 'error',
      error_message: REASON,
      api_key_name: 'checkout-service',
      user_id: 'ada@example.com',
      session_id: 'sess-42',
      environment: 'production',
      metadata: { tier: 'gold' },
    });
  });

  it('leads with the conversation: rendered messages, the tool call with name and JSON arguments that fold', async () => {
    const { page } = t.browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    await t.open(`executions/${failedId}`);
    await page.locator('li[data-type=tool_result]').waitFor();

    // The conversation before the details, and on the first screen.
    const order = await page.evaluate(() => {
      const main = document.querySelector('.execution-main')!;
      const facts = document.querySelector('.execution-facts')!;
      return main.compareDocumentPosition(facts) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    expect(order).toBeTruthy();
    const top = await page.locator('ol.timeline').evaluate((el) => el.getBoundingClientRect().top);
    expect(top).toBeLessThan(900);
    // Why it failed, above the conversation too.
    await expect(page.locator('[data-error-reason]').textContent()).resolves.toBe(REASON);

    // Messages as text by role, no raw JSON of parts.
    const message = page.locator('li[data-type=message]').first();
    await expect(message.locator('.text-value').textContent()).resolves.toBe('Where is my order 1234?');
    expect(await page.locator('ol.timeline').textContent()).not.toContain('"parts"');

    // The tool call: its name, its arguments pretty-printed in a block that folds.
    const call = page.locator('li[data-type=tool_call]');
    await expect(call.locator('strong').textContent()).resolves.toBe('find_order');
    const args = call.locator('details.json-block');
    expect(await args.getAttribute('open')).not.toBeNull();
    await expect(args.locator('pre.json').textContent()).resolves.toBe(
      JSON.stringify({ order_id: 1234, include: ['items', 'shipping'] }, null, 2),
    );
    await args.locator('summary').click();
    expect(await args.getAttribute('open')).toBeNull();
    await expect(args.locator('pre.json').isVisible()).resolves.toBe(false);
    await args.locator('summary').click();
    await expect(args.locator('pre.json').isVisible()).resolves.toBe(true);
    await expect(page.locator('li[data-type=tool_result] pre.json').textContent()).resolves.toContain('"carrier": "DHL"');
    await t.browser.screenshot('execution-page');
  });

  it('then who and what: status with the reason, environment, metadata, the key by name; user and session links navigate', async () => {
    const { page } = t.browser;
    await t.open(`executions/${failedId}`);
    const field = (name: string) => page.locator(`.execution-facts [data-field=${name}]`);
    await expect(field('status').textContent()).resolves.toBe(`error ${REASON}`);
    await expect(field('environment').textContent()).resolves.toBe('production');
    await expect(field('api-key').textContent()).resolves.toBe('checkout-service');
    await expect(page.locator('.execution-facts [data-metadata=tier]').textContent()).resolves.toBe('gold');
    await expect(page.locator('[data-exact-cost]').textContent()).resolves.toMatch(/^\$0\.\d+$/);

    await field('user').locator('a').click();
    await page.waitForURL(`${base()}/executions?user_id=ada%40example.com`);
    await page.locator(`tr[data-trace-id="${failedId}"]`).waitFor();
    await page.goBack();
    await field('session').locator('a').click();
    await page.waitForURL(`${base()}/sessions/sess-42`);
    await page.locator(`a[href="/projects/${PROJECT}/executions/${failedId}"]`).first().waitFor();
  });

  it('the executions list names the key that sent a run, its id on hover, a link to the rows it sent', async () => {
    const { page } = t.browser;
    await t.open('executions');
    const cell = page.locator(`tr[data-trace-id="${failedId}"] td[data-api-key]`);
    await expect.poll(() => cell.textContent()).toBe('checkout-service');
    await expect(page.locator('table.executions th', { hasText: 'API key' }).count()).resolves.toBe(1);
    const link = cell.locator('a');
    expect(await link.getAttribute('title')).toBe(`key ${keyId}`);
    expect(await link.getAttribute('href')).toBe(`/projects/${PROJECT}/executions?api_key_id=${keyId}`);
  });

  it('the span detail shows the status message, messages rendered, attributes with their values', async () => {
    const { page } = t.browser;
    await t.open(`executions/${failedId}?tab=spans`);
    await page.click('.wf-row[data-span-name="invoke_agent support-agent"]');
    await expect(page.locator('.span-detail .error-text').textContent()).resolves.toBe(REASON);
    await page.click('.wf-row[data-span-name="chat gpt-4o-mini"] >> nth=0');
    const detail = page.locator('.span-detail');
    await expect(detail.locator('.message-view[data-role=user] .text-value').textContent()).resolves.toBe('Where is my order 1234?');
    await expect(detail.locator('.tool-call[data-tool-call=find_order] pre.json').textContent()).resolves.toContain('"order_id": 1234');
    await expect(detail.locator('[data-attribute="gen_ai.request.model"]').textContent()).resolves.toBe('gpt-4o-mini');
    // A JSON string attribute is pretty-printed and folds.
    const input = detail.locator('[data-attribute="gen_ai.input.messages"] details.json-block');
    await expect(input.locator('pre.json').textContent()).resolves.toContain('"content": "Where is my order 1234?"');
    await t.browser.screenshot('execution-span-detail');
  });

  it('a span tree of 161 spans opens folded, unfolds a step on a click, expands and collapses all', async () => {
    const { page } = t.browser;
    await t.open(`executions/${bigId}?tab=spans`);
    const rows = page.locator('.wf-row[data-span-name]');
    await rows.first().waitFor();
    await expect(page.locator('.span-tree h2').textContent()).resolves.toBe('Span tree (161)');
    expect(await rows.count()).toBe(9); // the root and its 8 steps
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height).toBeLessThan(2_500);
    await t.browser.screenshot('execution-big-tree');

    const step = page.locator('.wf-row[data-span-name="step 3"]');
    await expect(step.locator('[data-hidden-spans]').textContent()).resolves.toContain('+19');
    await step.locator('button.wf-toggle').click();
    await expect.poll(() => step.locator('button.wf-toggle').getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => rows.count()).toBe(28);
    await step.locator('button.wf-toggle').click();
    await expect.poll(() => rows.count()).toBe(9);

    await page.click('button[data-action=expand-all]');
    await expect.poll(() => rows.count()).toBe(161);
    await page.click('button[data-action=collapse-all]');
    await expect.poll(() => rows.count()).toBe(1);
  });

  it('a root with 160 children opens with its first 20 and a button for the rest; Expand all shows every span', async () => {
    const { page } = t.browser;
    await t.open(`executions/${wideId}?tab=spans`);
    const rows = page.locator('.wf-row[data-span-name]');
    await rows.first().waitFor();
    await expect(page.locator('.span-tree h2').textContent()).resolves.toBe('Span tree (161)');
    // The root and its first 20 children in the tree's order (by start), then one row for the rest.
    await expect.poll(() => page.locator('.waterfall [role=row]').count()).toBe(1 + 21 + 1); // with the header row
    expect(await rows.count()).toBeLessThanOrEqual(22);
    expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-span-name')))).toEqual([
      'invoke_agent fan-out-agent',
      ...Array.from({ length: 20 }, (_, c) => `fetch ${c}`),
    ]);
    const more = page.getByRole('button', { name: 'Show 140 more spans of invoke_agent fan-out-agent' });
    await expect(more.textContent()).resolves.toBe('Show 140 more spans');
    await t.browser.screenshot('execution-wide-tree');

    // Reached and pressed from the keyboard: the rest, in order, and no button left.
    await more.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(161);
    expect(await page.locator('[data-action=show-more-spans]').count()).toBe(0);
    expect(await rows.nth(160).getAttribute('data-span-name')).toBe('fetch 159');
    // The focus is on the first span shown, not lost with the button; Enter there opens its details, Tab goes on.
    const focusedSpan = () => page.evaluate(() => document.activeElement?.getAttribute('data-span-name') ?? null);
    await expect.poll(focusedSpan).toBe('fetch 20');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.span-detail h3').textContent()).toBe('fetch 20');
    await page.keyboard.press(' ');
    await expect.poll(() => page.locator('.span-detail').count()).toBe(0);
    await page.keyboard.press('Tab');
    await expect.poll(focusedSpan).toBe('fetch 21');

    // Folded and unfolded again: cut again; Expand all shows every span.
    await page.click('button[data-action=collapse-all]');
    await expect.poll(() => rows.count()).toBe(1);
    await page.locator('.wf-row[data-span-name="invoke_agent fan-out-agent"] button.wf-toggle').click();
    await expect.poll(() => rows.count()).toBe(21);
    await page.click('button[data-action=expand-all]');
    await expect.poll(() => rows.count()).toBe(161);
    expect(await page.locator('[data-action=show-more-spans]').count()).toBe(0);
    expect(await page.locator('button[data-action=expand-all]').isDisabled()).toBe(true);
  });

  it('at 390 px wide nothing overflows sideways: the conversation, the details, the span tree', async () => {
    const { page } = t.browser;
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await t.open(`executions/${failedId}`);
    await page.locator('li[data-type=tool_result]').waitFor();
    await page.locator('.execution-facts').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await t.browser.screenshot('execution-page-390');
    await t.open(`executions/${failedId}?tab=spans`);
    await page.click('.wf-row[data-span-name="chat gpt-4o-mini"] >> nth=0');
    await page.locator('.span-detail').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await t.browser.screenshot('execution-spans-390');
    expect(t.errors).toEqual([]);
    await page.setViewportSize({ width: 1360, height: 900 });
  });
});
