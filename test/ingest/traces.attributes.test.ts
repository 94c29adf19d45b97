// Attributes kept (issue 13, item 7), end to end with the real OTLP exporters: user, session, tags
// and metadata sent in the Langfuse, OpenInference, OpenLLMetry and Vercel conventions reach the
// execution's detail, filter the list (user_id, session_id, tag) and are named by explain; a
// template usage recorded from spans carries the index of the message its prompt rendered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, context, trace, type Attributes } from '@opentelemetry/api';
import { dropTestDatabases } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { exporting } from '../helpers/otel.ts';

let svc: TestService;
const P = 'default';
beforeAll(async () => {
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const api = (rest: string) => `${svc.url}/api/projects/${P}${rest}`;
const executionOf = (traceId: string) =>
  until(async () => {
    const r = await getJson(api(`/executions/${traceId}?include_messages=true`));
    return r.status === 200 ? r.body : undefined;
  }, `execution ${traceId}`);

/** One trace: a root carrying `rootAttrs`, a chat span below it carrying `chatAttrs`. */
async function sendTrace(protocol: 'proto' | 'json', rootAttrs: Attributes, chatAttrs: Attributes = {}): Promise<string> {
  const ex = exporting(svc.url, { protocol, gzip: protocol === 'proto' });
  const base = Date.now() - 5_000;
  const root = ex.tracer.startSpan('invoke_agent support', {
    kind: SpanKind.INTERNAL,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', ...rootAttrs },
    startTime: new Date(base),
  });
  const llm = ex.tracer.startSpan(
    'chat gpt-4o-mini',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
        ...chatAttrs,
      },
      startTime: new Date(base + 10),
    },
    trace.setSpan(context.active(), root),
  );
  llm.end(new Date(base + 500));
  root.end(new Date(base + 600));
  await ex.flush();
  await ex.shutdown();
  return root.spanContext().traceId;
}

describe('attributes kept from each convention', () => {
  const traces: Record<string, string> = {};

  beforeAll(async () => {
    traces.langfuse = await sendTrace('proto', {
      'langfuse.user.id': 'alice',
      'langfuse.session.id': 'sess-lf',
      'langfuse.trace.tags': ['prod', 'checkout'],
      'langfuse.trace.metadata.region': 'eu-west',
    });
    traces.openinference = await sendTrace('json', {
      'user.id': 'bob',
      'session.id': 'sess-oi',
      'tag.tags': ['prod'],
      metadata: JSON.stringify({ customer: 'acme' }),
    });
    traces.traceloop = await sendTrace(
      'proto',
      {},
      {
        'traceloop.association.properties.user_id': 'carol',
        'traceloop.association.properties.session_id': 'sess-tl',
        'traceloop.association.properties.ticket': 'T-7',
      },
    );
    traces.vercel = await sendTrace('json', {
      'ai.telemetry.metadata.userId': 'dave',
      'ai.telemetry.metadata.sessionId': 'sess-v',
      'ai.telemetry.metadata.plan': 'pro',
    });
  });

  it('the detail shows user_id, session_id, tags and metadata', async () => {
    const lf = await executionOf(traces.langfuse!);
    expect([lf.user_id, lf.session_id, lf.tags, lf.metadata]).toEqual(['alice', 'sess-lf', ['prod', 'checkout'], { region: 'eu-west' }]);
    const oi = await executionOf(traces.openinference!);
    expect([oi.user_id, oi.session_id, oi.tags, oi.metadata]).toEqual(['bob', 'sess-oi', ['prod'], { customer: 'acme' }]);
    const tl = await executionOf(traces.traceloop!);
    expect([tl.user_id, tl.session_id, tl.tags, tl.metadata]).toEqual(['carol', 'sess-tl', [], { ticket: 'T-7' }]);
    const v = await executionOf(traces.vercel!);
    expect([v.user_id, v.session_id, v.metadata]).toEqual(['dave', 'sess-v', { plan: 'pro' }]);
  });

  it('the list filters on user_id, session_id and tag', async () => {
    const ids = async (qs: string) => {
      const r = await getJson(api(`/executions?${qs}`));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as Array<{ trace_id: string }>).map((i) => i.trace_id).sort();
    };
    expect(await ids('user_id=alice')).toEqual([traces.langfuse]);
    expect(await ids('user_id=alice,dave')).toEqual([traces.langfuse, traces.vercel].sort());
    expect(await ids('session_id=sess-tl')).toEqual([traces.traceloop]);
    expect(await ids('tag=prod')).toEqual([traces.langfuse, traces.openinference].sort());
    expect(await ids('tag=checkout&tag=nothing')).toEqual([traces.langfuse]);
    expect(await ids('tag=prod&user_id=bob')).toEqual([traces.openinference]);
    expect(await ids('user_id=nobody')).toEqual([]);
    const exported = await fetch(api('/executions/export?format=jsonl&tag=checkout'));
    expect(
      (await exported.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).trace_id),
    ).toEqual([traces.langfuse]);
  });

  it('a direct record takes user_id too', async () => {
    const r = await getJson(api('/executions'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ trace_id: 'direct-user-1', user_id: 'erin', tags: ['api'] }),
    });
    expect(r.status).toBe(201);
    expect(r.body.user_id).toBe('erin');
    const list = await getJson(api('/executions?user_id=erin'));
    expect(list.body.items.map((i: { trace_id: string }) => i.trace_id)).toEqual(['direct-user-1']);
  });
});

describe('explain', () => {
  it('names each attribute mapped, and those ignored with the reason', async () => {
    const span = (attributes: Array<[string, object]>) => ({
      traceId: '7'.repeat(32),
      spanId: '1'.repeat(16),
      name: 'chat',
      kind: 3,
      startTimeUnixNano: '1700000000000000000',
      endTimeUnixNano: '1700000001000000000',
      attributes: attributes.map(([key, value]) => ({ key, value })),
    });
    const body = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                span([
                  ['gen_ai.operation.name', { stringValue: 'chat' }],
                  ['user.id', { stringValue: 'frank' }],
                  ['langfuse.user.id', { stringValue: 'other' }],
                  ['session.id', { stringValue: 's-9' }],
                  ['tag.tags', { arrayValue: { values: [{ stringValue: 'a' }] } }],
                  ['metadata', { stringValue: '{"not json' }],
                ]),
              ],
            },
          ],
        },
      ],
    };
    const r = await getJson(`${svc.url}/api/v1/traces?explain=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    const s = r.body.explain.spans[0];
    expect(s.mapped).toMatchObject({ userId: 'user.id', sessionId: 'session.id', tags: 'tag.tags' });
    expect(s.ignored).toEqual(
      expect.arrayContaining([
        { key: 'langfuse.user.id', reason: expect.stringMatching(/superseded by user\.id/) },
        { key: 'metadata', reason: expect.stringMatching(/malformed JSON/) },
      ]),
    );
  });
});

describe('template usages from spans', () => {
  it('carry the index and role of the message their prompt rendered', async () => {
    const created = await getJson(api('/prompts'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        prompt_id: 'weather-system',
        type: 'chat',
        template: [{ role: 'system', content: 'You answer weather questions about {{city}}.' }],
      }),
    });
    expect(created.status).toBe(201);
    const input = [
      { role: 'system', parts: [{ type: 'text', content: 'You answer weather questions about Paris.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Weather?' }] },
    ];
    const chat = {
      'gen_ai.input.messages': JSON.stringify(input),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Sunny.' }] }]),
      'traceloom.prompt.id': 'weather-system',
      'traceloom.prompt.inputs': JSON.stringify({ city: 'Paris' }),
    };
    const traceId = await sendTrace('proto', {}, chat);
    const e = await executionOf(traceId);
    expect(e.template_usages).toEqual([
      expect.objectContaining({ prompt_id: 'weather-system', version: 1, message_index: 0, role: 'system', source: 'otlp' }),
    ]);
    expect(e.conversation_history[0]).toEqual({ role: 'system', content: 'You answer weather questions about Paris.' });

    // Inputs that do not render what the conversation holds: the index stays unknown (null), never a guess.
    const other = await sendTrace('json', {}, { ...chat, 'traceloom.prompt.inputs': JSON.stringify({ city: 'Rome' }) });
    const o = await executionOf(other);
    expect(o.template_usages).toEqual([expect.objectContaining({ prompt_id: 'weather-system', message_index: null, role: null })]);
  });
});
