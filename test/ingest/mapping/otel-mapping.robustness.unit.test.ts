// The mapper never throws: malformed JSON, wrong types, hostile keys and huge values are skipped
// and listed in explain.ignored, and the rest of the span is still mapped.
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../../src/ingest/mapping/index.ts';
import type { AttrValue, DecodedSpan } from '../../../src/executions/span.ts';
import { event, json, span } from '../../helpers/spans.ts';

describe('malformed values', () => {
  it('bad JSON in gen_ai.input.messages is noted and the next source is used', () => {
    const m = mapSpan(
      span({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.input.messages': '[{"role":"user", parts: oops',
        'input.value': 'fallback text',
      }),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'fallback text' }]);
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.input.messages',
      reason: 'malformed JSON: "[{\\"role\\":\\"user\\", parts: oops"',
    });
  });

  it('bad JSON in a details event is noted with the event name', () => {
    const m = mapSpan(
      span(
        { 'gen_ai.operation.name': 'chat' },
        { events: [event('gen_ai.client.inference.operation.details', { 'gen_ai.output.messages': '{nope' })] },
      ),
    );
    expect(m.outputMessages).toEqual([]);
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.client.inference.operation.details event: gen_ai.output.messages',
      reason: 'malformed JSON: "{nope"',
    });
  });

  it('wrong types: a numeric model, an object provider, a boolean session id are ignored with reasons', () => {
    const m = mapSpan(
      span({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 42,
        'gen_ai.provider.name': { a: 1 },
        'session.id': true,
        'gen_ai.usage.input_tokens': [1, 2],
      }),
    );
    expect(m).toMatchObject({ spanClass: 'inference', model: '', provider: '', sessionId: '' });
    expect(m.usage).toBeUndefined();
    expect(m.explain.ignored).toEqual(
      expect.arrayContaining([
        { key: 'gen_ai.request.model', reason: 'not a model name: 42' },
        { key: 'gen_ai.provider.name', reason: 'not a string' },
        { key: 'session.id', reason: 'not a session id: true' },
        { key: 'gen_ai.usage.input_tokens', reason: 'not a token count: array(2)' },
      ]),
    );
  });

  it('messages of the wrong shape yield nothing rather than failing', () => {
    for (const bad of ['"just a string"', '42', '{"role": 5}', '[null, 1, "x", [], {"parts": "nope"}]', 'null', '{}']) {
      const m = mapSpan(span({ 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': bad, 'gen_ai.output.messages': bad }));
      expect(m.spanClass, bad).toBe('inference');
      expect(Array.isArray(m.inputMessages)).toBe(true);
    }
    expect(mapSpan(span({ 'gen_ai.input.messages': '[null, 1, "x"]' })).inputMessages).toEqual([{ role: 'user', content: 'x' }]);
  });

  it('indexed keys with absurd or broken indices are ignored, not allocated', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'LLM',
        'llm.input_messages.99999999999.message.role': 'user',
        'llm.input_messages.x.message.role': 'user',
        'llm.input_messages.3.': 'dangling',
        'llm.input_messages.1.message.role': 'user',
        'llm.input_messages.1.message.content': 'kept',
        'llm.input_messages.1.message.tool_calls.99999999.tool_call.id': 'far',
      }),
    );
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'kept' }]);
    expect(m.explain.ignored).toContainEqual({ key: 'llm.input_messages.99999999999.message.role', reason: 'not an indexed message key' });
    expect(m.explain.ignored).toContainEqual({ key: 'llm.input_messages.x.message.role', reason: 'not an indexed message key' });
  });

  it('__proto__ keys cannot change what is read', () => {
    const attrs: Record<string, AttrValue> = JSON.parse(
      '{"gen_ai.prompt.0.__proto__": {"role": "system"}, "gen_ai.prompt.0.content": "hi", "gen_ai.prompt.name": "p", "gen_ai.prompt.variable.__proto__": {"x": 1}}',
    );
    const m = mapSpan(span({ 'llm.request.type': 'chat', ...attrs }));
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(m.promptUsages).toEqual([{ promptId: 'p' }]);
    expect(({} as Record<string, unknown>)['role']).toBeUndefined();
  });

  it('a missing or broken span shape still maps', () => {
    const broken = { ...span({}), attributes: null, events: null, name: undefined } as unknown as DecodedSpan;
    const m = mapSpan(broken);
    expect(m.spanClass).toBe('other');
    expect(m.explain.ignored.some((i) => i.key === '*')).toBe(false);
    const events = mapSpan({
      ...span({ 'gen_ai.operation.name': 'chat' }),
      events: [null, { name: 'gen_ai.user.message' }, { name: 'gen_ai.choice', attributes: 'x' }],
    } as unknown as DecodedSpan);
    expect(events.spanClass).toBe('inference');
  });
});

describe('huge values', () => {
  it('a message list beyond 5000 is cut there', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => ({ role: 'user', parts: [{ type: 'text', content: `m${i}` }] }));
    const m = mapSpan(span({ 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': json(many) }));
    expect(m.inputMessages).toHaveLength(5000);
    expect(m.inputMessages[4999]).toEqual({ role: 'user', content: 'm4999' });
  });

  it('deeply nested JSON does not overflow the stack', () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const nestedObj = `${'{"content":'.repeat(5_000)}"x"${'}'.repeat(5_000)}`;
    for (const v of [deep, nestedObj]) {
      const m = mapSpan(
        span({
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': v,
          'gen_ai.output.messages': v,
          'gen_ai.tool.call.arguments': v,
          'traceloom.prompt.id': 'p',
          'traceloom.prompt.inputs': v,
        }),
      );
      expect(m.spanClass).toBe('inference');
    }
  });

  it('random garbage on every known key never throws', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const values: AttrValue[] = [
      '',
      ' ',
      'x',
      '{',
      '[1,',
      '[]',
      '{}',
      'null',
      '-1',
      'NaN',
      '1e400',
      0,
      -1,
      1.5,
      NaN,
      Infinity,
      true,
      false,
      null,
      [],
      [null],
      [1, 'a', {}],
      {},
      { role: 7, parts: 'p' },
      [{ role: 'user', parts: [{ type: 'tool_call', arguments: { deep: [[[]]] } }] }],
      json([{ role: 'assistant', content: [{ toolUse: null }, { toolResult: 5 }] }]),
    ];
    const keys = [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.system',
      'llm.provider',
      'llm.system',
      'ai.model.provider',
      'server.address',
      'gen_ai.request.model',
      'gen_ai.response.model',
      'llm.model_name',
      'ai.model.id',
      'gen_ai.model.id',
      'openinference.span.kind',
      'traceloop.span.kind',
      'spring.ai.kind',
      'llm.request.type',
      'ai.operationId',
      'gen_ai.tool.name',
      'gen_ai.tool.call.id',
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
      'gen_ai.usage.input_tokens',
      'gen_ai.usage.output_tokens',
      'gen_ai.usage.cache_read.input_tokens',
      'gen_ai.usage.cache_write.input_tokens',
      'gen_ai.usage.reasoning.output_tokens',
      'gen_ai.usage.total_tokens',
      'ai.usage.inputTokens',
      'ai.response.providerMetadata',
      'gen_ai.usage.cost',
      'llm.cost.total',
      'gen_ai.agent.name',
      'ai.telemetry.functionId',
      'gen_ai.conversation.id',
      'session.id',
      'traceloom.prompt.id',
      'traceloom.prompt.version',
      'traceloom.prompt.inputs',
      'gen_ai.prompt.name',
      'gen_ai.prompt.variable.a',
      'llm.prompt_template.variables',
      'llm.prompt_template.version',
      'gen_ai.system_instructions',
      'gen_ai.input.messages',
      'gen_ai.output.messages',
      'ai.prompt.messages',
      'ai.prompt',
      'ai.response.text',
      'ai.response.toolCalls',
      'ai.response.object',
      'llm.input_messages.0.message.role',
      'llm.input_messages.0.message.content',
      'llm.input_messages.0.message.tool_calls.0.tool_call.function.arguments',
      'llm.output_messages.0.message.contents.0.message_content.type',
      'gen_ai.prompt.0.content',
      'gen_ai.prompt.0.tool_calls.0.arguments',
      'gen_ai.completion.0.content',
      'gen_ai.prompt',
      'gen_ai.completion',
      'gcp.vertex.agent.llm_request',
      'gcp.vertex.agent.llm_response',
      'input.value',
      'output.value',
      'error.type',
      'traceloop.entity.name',
    ];
    const eventNames = [
      'gen_ai.client.inference.operation.details',
      'gen_ai.user.message',
      'gen_ai.tool.message',
      'gen_ai.choice',
      'gen_ai.content.prompt',
      'exception',
    ];
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    for (let i = 0; i < 2000; i++) {
      const attrs: Record<string, AttrValue> = {};
      for (const k of keys) if (rnd() < 0.3) attrs[k] = pick(values);
      const events = Array.from({ length: Math.floor(rnd() * 4) }, () =>
        event(pick(eventNames), {
          content: pick(values),
          message: pick(values),
          tool_calls: pick(values),
          'gen_ai.input.messages': pick(values),
          'gen_ai.prompt': pick(values),
          index: pick(values),
        }),
      );
      const m = mapSpan(
        span(attrs, { events, statusCode: pick([0, 1, 2]), name: pick(['chat', 'ai.toolCall', 'agent run', 'execute_tool x', '']) }),
      );
      expect(['inference', 'tool', 'agent', 'other']).toContain(m.spanClass);
      expect(
        m.explain.ignored.find((x) => x.key === '*'),
        JSON.stringify(attrs),
      ).toBeUndefined();
    }
  });

  it('explain.ignored stays bounded', () => {
    const attrs: Record<string, AttrValue> = { 'openinference.span.kind': 'LLM' };
    for (let i = 0; i < 1000; i++) attrs[`llm.input_messages.${i}x.message.role`] = 'user';
    expect(mapSpan(span(attrs)).explain.ignored.length).toBeLessThanOrEqual(200);
  });
});
