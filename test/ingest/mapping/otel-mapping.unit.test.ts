// The semantic-convention mapper, dialect by dialect: a span as each SDK sends it (exact keys) →
// class, model, provider, usage, agent, session, messages and the explain record.
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../../src/ingest/mapping/index.ts';
import { event, json, span } from '../../helpers/spans.ts';

const weatherInput = [
  { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
  { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { location: 'Paris' } }] },
  { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'rainy, 57°F' }] },
];
const weatherOutput = [{ role: 'assistant', parts: [{ type: 'text', content: 'It is rainy.' }], finish_reason: 'stop' }];
const expectedInput = [
  { role: 'system', content: 'You are helpful.' },
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { location: 'Paris' } }] },
  { role: 'tool', content: 'rainy, 57°F', tool_call_id: 'call_1' },
];
const expectedOutput = [{ role: 'assistant', content: 'It is rainy.' }];

describe('OpenTelemetry GenAI (v1.37+)', () => {
  const attrs = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    'gen_ai.usage.input_tokens': 120,
    'gen_ai.usage.output_tokens': 30,
    'gen_ai.usage.cache_read.input_tokens': 20,
    'gen_ai.conversation.id': 'conv-1',
    'gen_ai.agent.name': 'weather-bot',
  };

  it('maps a chat span with messages as JSON strings', () => {
    const m = mapSpan(
      span(
        {
          ...attrs,
          'gen_ai.system_instructions': json([{ type: 'text', content: 'You are helpful.' }]),
          'gen_ai.input.messages': json(weatherInput),
          'gen_ai.output.messages': json(weatherOutput),
        },
        { name: 'chat gpt-4o-mini', kind: 3 },
      ),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.operation).toBe('chat');
    expect(m.model).toBe('gpt-4o-mini-2024-07-18');
    expect(m.provider).toBe('openai');
    expect(m.usage).toEqual({ tokensIn: 120, tokensOut: 30, cachedIn: 20, cacheWriteIn: 0, reasoning: 0 });
    expect(m.agentId).toBe('weather-bot');
    expect(m.sessionId).toBe('conv-1');
    expect(m.inputMessages).toEqual(expectedInput);
    expect(m.outputMessages).toEqual(expectedOutput);
    expect(m.errorMessage).toBe('');
    expect(m.providedCostUsd).toBeUndefined();
    expect(m.explain.mapped).toMatchObject({
      spanClass: 'gen_ai.operation.name (chat)',
      operation: 'gen_ai.operation.name',
      model: 'gen_ai.response.model',
      provider: 'gen_ai.provider.name (openai)',
      usage: 'gen_ai.usage.input_tokens, gen_ai.usage.output_tokens, gen_ai.usage.cache_read.input_tokens',
      agentId: 'gen_ai.agent.name',
      sessionId: 'gen_ai.conversation.id',
      inputMessages: 'gen_ai.system_instructions + gen_ai.input.messages',
      outputMessages: 'gen_ai.output.messages',
    });
    expect(m.explain.ignored).toContainEqual({ key: 'gen_ai.system', reason: 'superseded by gen_ai.provider.name' });
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.request.model',
      reason: 'superseded by gen_ai.response.model ("gpt-4o-mini")',
    });
  });

  it('accepts the same messages as structured AnyValues (arrays of kvlists)', () => {
    const m = mapSpan(
      span({
        ...attrs,
        'gen_ai.system_instructions': [{ type: 'text', content: 'You are helpful.' }],
        'gen_ai.input.messages': weatherInput,
        'gen_ai.output.messages': weatherOutput,
      }),
    );
    expect(m.inputMessages).toEqual(expectedInput);
    expect(m.outputMessages).toEqual(expectedOutput);
  });

  it('reads messages from gen_ai.client.inference.operation.details events (Strands latest mode: one key per event)', () => {
    const details = 'gen_ai.client.inference.operation.details';
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'strands-agents',
          'gen_ai.request.model': 'us.anthropic.claude-sonnet-4-20250514-v1:0',
          'gen_ai.usage.input_tokens': 500,
          'gen_ai.usage.output_tokens': 20,
        },
        {
          name: 'chat',
          events: [
            event(details, { 'gen_ai.system_instructions': json([{ type: 'text', content: 'You are helpful.' }]) }),
            event(details, { 'gen_ai.input.messages': json(weatherInput) }),
            event(details, { 'gen_ai.output.messages': json(weatherOutput) }),
          ],
        },
      ),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.provider).toBe('aws.bedrock');
    expect(m.explain.mapped['provider']).toBe(
      'inferred from the model (us.anthropic.claude-sonnet-4-20250514-v1:0 → aws.bedrock); gen_ai.provider.name=strands-agents names the framework',
    );
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.provider.name',
      reason: 'names the framework or client (strands-agents), not the LLM vendor',
    });
    expect(m.inputMessages).toEqual(expectedInput);
    expect(m.outputMessages).toEqual(expectedOutput);
    expect(m.explain.mapped['inputMessages']).toBe(
      `${details} event (gen_ai.system_instructions) + ${details} event (gen_ai.input.messages)`,
    );
  });

  it('prefers span attributes over the details event, key by key', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: 'from attribute' }] }]),
        },
        {
          events: [
            event('gen_ai.client.inference.operation.details', {
              'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: 'from event' }] }]),
              'gen_ai.output.messages': json(weatherOutput),
            }),
          ],
        },
      ),
    );
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'from attribute' }]);
    expect(m.outputMessages).toEqual(expectedOutput);
  });

  it('maps v1.36 per-message events (OpenAI-style tool calls as JSON strings)', () => {
    const m = mapSpan(
      span(
        { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o' },
        {
          events: [
            event('gen_ai.system.message', { 'gen_ai.system': 'openai', content: 'Be brief.' }),
            event('gen_ai.user.message', { 'gen_ai.system': 'openai', content: 'Hi' }),
            event('gen_ai.assistant.message', {
              'gen_ai.system': 'openai',
              tool_calls: json([{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }]),
            }),
            event('gen_ai.tool.message', { 'gen_ai.system': 'openai', content: 'found', id: 'call_9' }),
            event('gen_ai.choice', {
              'gen_ai.system': 'openai',
              index: 1,
              finish_reason: 'stop',
              message: json({ content: 'Second', role: 'assistant' }),
            }),
            event('gen_ai.choice', {
              'gen_ai.system': 'openai',
              index: 0,
              finish_reason: 'stop',
              message: json({ content: 'Done', role: 'assistant' }),
            }),
          ],
        },
      ),
    );
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', name: 'lookup', arguments: { q: 'x' } }] },
      { role: 'tool', content: 'found', tool_call_id: 'call_9' },
    ]);
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: 'Done' },
      { role: 'assistant', content: 'Second' },
    ]);
    expect(m.explain.mapped['inputMessages']).toBe('gen_ai.{system,user,assistant,tool}.message events');
  });

  it('maps the oldest gen_ai.content.prompt / gen_ai.content.completion events', () => {
    const m = mapSpan(
      span(
        { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4' },
        {
          events: [
            event('gen_ai.content.prompt', {
              'gen_ai.prompt': json([
                { role: 'system', content: 'sys' },
                { role: 'user', content: 'q' },
              ]),
            }),
            event('gen_ai.content.completion', { 'gen_ai.completion': json([{ role: 'assistant', content: 'a' }]) }),
          ],
        },
      ),
    );
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'a' }]);
  });
});

describe('Strands Agents', () => {
  it('an invoke_agent span with summed usage is an agent and counts nothing', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.system': 'strands-agents',
          'gen_ai.agent.name': 'weather_agent',
          'gen_ai.request.model': 'us.anthropic.claude-sonnet-4-20250514-v1:0',
          'gen_ai.usage.prompt_tokens': 300,
          'gen_ai.usage.input_tokens': 300,
          'gen_ai.usage.completion_tokens': 50,
          'gen_ai.usage.output_tokens': 50,
          'gen_ai.usage.total_tokens': 350,
          'gen_ai.usage.cache_read_input_tokens': 0,
          'gen_ai.usage.cache_write_input_tokens': 0,
        },
        { name: 'invoke_agent weather_agent' },
      ),
    );
    expect(m.spanClass).toBe('agent');
    expect(m.usage).toBeUndefined();
    expect(m.agentId).toBe('weather_agent');
    expect(m.provider).toBe('aws.bedrock');
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.usage.input_tokens',
      reason: 'agent span: usage is counted on its inference children',
    });
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.usage.output_tokens',
      reason: 'agent span: usage is counted on its inference children',
    });
    expect(m.explain.ignored).toContainEqual({ key: 'gen_ai.usage.prompt_tokens', reason: 'superseded by gen_ai.usage.input_tokens' });
  });

  it('its chat span is inference; a total that includes the cache shows input excluded it', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'strands-agents',
          'gen_ai.request.model': 'us.anthropic.claude-sonnet-4-20250514-v1:0',
          'gen_ai.usage.input_tokens': 500,
          'gen_ai.usage.output_tokens': 20,
          'gen_ai.usage.total_tokens': 620,
          'gen_ai.usage.cache_read_input_tokens': 100,
          'gen_ai.usage.cache_write_input_tokens': 0,
        },
        { name: 'chat' },
      ),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.usage).toEqual({ tokensIn: 600, tokensOut: 20, cachedIn: 100, cacheWriteIn: 0, reasoning: 0 });
    expect(m.explain.mapped['usage.conversion']).toBe(
      'gen_ai.usage.total_tokens = input + output + cache: gen_ai.usage.input_tokens excluded the cache, added',
    );
  });

  it('maps its v1.36 events whose content is Bedrock content blocks', () => {
    const m = mapSpan(
      span(
        { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'strands-agents', 'gen_ai.request.model': 'us.amazon.nova-pro-v1:0' },
        {
          events: [
            event('gen_ai.user.message', { content: json([{ text: 'What is 2+2?' }]) }),
            event('gen_ai.assistant.message', { content: json([{ toolUse: { toolUseId: 't1', name: 'calc', input: { expr: '2+2' } } }]) }),
            event('gen_ai.tool.message', {
              content: json([{ toolResult: { toolUseId: 't1', status: 'success', content: [{ text: '4' }] } }]),
              id: 't1',
            }),
            event('gen_ai.choice', { finish_reason: 'end_turn', message: json([{ text: 'It is 4.' }]) }),
          ],
        },
      ),
    );
    expect(m.provider).toBe('aws.bedrock');
    expect(m.inputMessages).toEqual([
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', name: 'calc', arguments: { expr: '2+2' } }] },
      { role: 'tool', content: '4', tool_call_id: 't1' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'It is 4.' }]);
  });

  it('execute_tool is a tool span; execute_event_loop_cycle is other', () => {
    const tool = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'calc',
          'gen_ai.tool.call.id': 't1',
          'gen_ai.tool.status': 'success',
        },
        { name: 'execute_tool calc' },
      ),
    );
    expect(tool).toMatchObject({ spanClass: 'tool', toolName: 'calc', toolCallId: 't1', operation: 'execute_tool' });
    const cycle = mapSpan(
      span(
        { 'gen_ai.operation.name': 'execute_event_loop_cycle', 'event_loop.cycle_id': 'c1', 'gen_ai.usage.input_tokens': 10 },
        { name: 'execute_event_loop_cycle' },
      ),
    );
    expect(cycle.spanClass).toBe('other');
    expect(cycle.usage).toBeUndefined();
    expect(cycle.explain.ignored).toContainEqual({
      key: 'gen_ai.usage.input_tokens',
      reason: 'not an inference span: usage is not counted',
    });
  });
});

describe('OpenInference', () => {
  it('LLM span: flattened messages with contents, tool calls and tool messages; cost; prompt template without id', () => {
    const m = mapSpan(
      span(
        {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-mini-2024-07-18',
          'llm.provider': 'openai',
          'llm.system': 'openai',
          'llm.token_count.prompt': 30,
          'llm.token_count.completion': 12,
          'llm.token_count.total': 42,
          'llm.token_count.prompt_details.cache_read': 10,
          'llm.cost.total': 0.0000123,
          'session.id': 's-1',
          'llm.input_messages.0.message.role': 'system',
          'llm.input_messages.0.message.content': 'Be terse.',
          'llm.input_messages.1.message.role': 'user',
          'llm.input_messages.1.message.contents.0.message_content.type': 'text',
          'llm.input_messages.1.message.contents.0.message_content.text': 'Look at this',
          'llm.input_messages.1.message.contents.1.message_content.type': 'image',
          'llm.input_messages.1.message.contents.1.message_content.image.image.url': 'https://x.test/cat.png',
          'llm.input_messages.2.message.role': 'tool',
          'llm.input_messages.2.message.content': 'sunny',
          'llm.input_messages.2.message.tool_call_id': 'call_0',
          'llm.input_messages.2.message.name': 'get_weather',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_a',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
          'input.value': json({ messages: [{ role: 'user', content: 'ignored' }], model: 'gpt-4o-mini' }),
          'input.mime_type': 'application/json',
          'output.value': json({ choices: [] }),
          'llm.prompt_template.template': 'Weather in {city}?',
          'llm.prompt_template.version': 'v3',
          'llm.prompt_template.variables': json({ city: 'Paris' }),
        },
        { name: 'OpenAI Chat Completions', kind: 1 },
      ),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.operation).toBe('LLM');
    expect(m.model).toBe('gpt-4o-mini-2024-07-18');
    expect(m.provider).toBe('openai');
    expect(m.usage).toEqual({ tokensIn: 30, tokensOut: 12, cachedIn: 10, cacheWriteIn: 0, reasoning: 0 });
    expect(m.providedCostUsd).toBe('0.0000123');
    expect(m.sessionId).toBe('s-1');
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Look at this\n[image https://x.test/cat.png]' },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_0', name: 'get_weather' },
    ]);
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
    expect(m.promptUsages).toEqual([]);
    expect(m.explain.mapped).toMatchObject({
      spanClass: 'openinference.span.kind (LLM)',
      provider: 'llm.provider (openai)',
      providedCostUsd: 'llm.cost.total',
      inputMessages: 'llm.input_messages.*',
    });
    expect(m.explain.ignored).toContainEqual({ key: 'input.value', reason: 'superseded by llm.input_messages.*' });
    expect(m.explain.ignored).toContainEqual({
      key: 'llm.prompt_template.*',
      reason: 'OpenInference names no prompt id: set traceloom.prompt.id to link the template',
    });
  });

  it('TOOL span: input.value/output.value are the arguments and result, not messages', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'tool.description': 'weather',
        'input.value': '{"city":"Paris"}',
        'output.value': 'sunny',
      }),
    );
    expect(m).toMatchObject({
      spanClass: 'tool',
      toolName: 'get_weather',
      toolArguments: { city: 'Paris' },
      toolResult: 'sunny',
      inputMessages: [],
      outputMessages: [],
    });
    expect(m.explain.mapped).toMatchObject({ toolName: 'tool.name', toolArguments: 'input.value', toolResult: 'output.value' });
  });

  it('AGENT and CHAIN spans are agents and never count usage; text input/output become messages', () => {
    const agent = mapSpan(
      span({
        'openinference.span.kind': 'AGENT',
        'agent.name': 'planner',
        'llm.token_count.prompt': 90,
        'llm.token_count.completion': 10,
        'input.value': 'plan a trip',
        'output.value': 'done',
      }),
    );
    expect(agent).toMatchObject({
      spanClass: 'agent',
      agentId: 'planner',
      inputMessages: [{ role: 'user', content: 'plan a trip' }],
      outputMessages: [{ role: 'assistant', content: 'done' }],
    });
    expect(agent.usage).toBeUndefined();
    expect(agent.explain.ignored).toContainEqual({
      key: 'llm.token_count.prompt',
      reason: 'agent span: usage is counted on its inference children',
    });
    const chain = mapSpan(span({ 'openinference.span.kind': 'CHAIN', 'llm.model_name': 'gpt-4o', 'input.value': '{"input":"hi"}' }));
    expect(chain.spanClass).toBe('agent');
    expect(chain.inputMessages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('EMBEDDING span is inference, model from embedding.model_name, provider inferred', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'EMBEDDING',
        'embedding.model_name': 'text-embedding-3-small',
        'llm.token_count.prompt': 8,
        'embedding.embeddings.0.embedding.text': 'hello',
      }),
    );
    expect(m).toMatchObject({
      spanClass: 'inference',
      model: 'text-embedding-3-small',
      provider: 'openai',
      usage: { tokensIn: 8, tokensOut: 0, cachedIn: 0, cacheWriteIn: 0, reasoning: 0 },
    });
  });

  it('RETRIEVER span is other even with a model-ish attribute', () => {
    expect(mapSpan(span({ 'openinference.span.kind': 'RETRIEVER', 'embedding.model_name': 'text-embedding-3-small' })).spanClass).toBe(
      'other',
    );
  });
});

describe('OpenLLMetry / Traceloop', () => {
  it('old style: llm.request.type, gen_ai.prompt.N.* / gen_ai.completion.N.* with tool calls, deprecated usage names', () => {
    const m = mapSpan(
      span(
        {
          'llm.request.type': 'chat',
          'gen_ai.system': 'OpenAI',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.usage.prompt_tokens': 50,
          'gen_ai.usage.completion_tokens': 10,
          'llm.usage.total_tokens': 60,
          'gen_ai.usage.cache_read_input_tokens': 5,
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': 'Weather?',
          'gen_ai.prompt.1.role': 'assistant',
          'gen_ai.prompt.1.tool_calls.0.id': 'c1',
          'gen_ai.prompt.1.tool_calls.0.name': 'get_weather',
          'gen_ai.prompt.1.tool_calls.0.arguments': '{"city":"Rome"}',
          'gen_ai.prompt.2.role': 'tool',
          'gen_ai.prompt.2.content': 'hot',
          'gen_ai.prompt.2.tool_call_id': 'c1',
          'gen_ai.prompt.10.role': 'user',
          'gen_ai.prompt.10.content': 'index ten comes last',
          'gen_ai.completion.0.role': 'assistant',
          'gen_ai.completion.0.content': 'It is hot.',
          'gen_ai.completion.0.finish_reason': 'stop',
          'traceloop.association.properties.session_id': 'sess-9',
          'traceloop.workflow.name': 'wf',
        },
        { name: 'openai.chat', kind: 3 },
      ),
    );
    expect(m).toMatchObject({
      spanClass: 'inference',
      operation: 'chat',
      model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      sessionId: 'sess-9',
    });
    expect(m.usage).toEqual({ tokensIn: 50, tokensOut: 10, cachedIn: 5, cacheWriteIn: 0, reasoning: 0 });
    expect(m.explain.mapped['provider']).toBe('gen_ai.system (OpenAI → openai)');
    expect(m.inputMessages).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Rome' } }] },
      { role: 'tool', content: 'hot', tool_call_id: 'c1' },
      { role: 'user', content: 'index ten comes last' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'It is hot.' }]);
  });

  it('old style: legacy function_call and multi-part JSON content', () => {
    const m = mapSpan(
      span({
        'llm.request.type': 'chat',
        'gen_ai.system': 'Anthropic',
        'gen_ai.request.model': 'claude-3-5-sonnet-20241022',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': json([
          { type: 'text', text: 'part one' },
          { type: 'text', text: 'part two' },
        ]),
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.function_call.name': 'lookup',
        'gen_ai.completion.0.function_call.arguments': '{"id":7}',
      }),
    );
    expect(m.provider).toBe('anthropic');
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'part one\npart two' }]);
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: '', name: 'lookup', arguments: { id: 7 } }] },
    ]);
  });

  it('new style (0.27): current semconv with traceloop.workflow.name', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.provider.name': 'openai',
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: 'Hi' }] }]),
          'gen_ai.output.messages': json([
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'call_q', name: 'search', arguments: { q: 'hi' } }],
              finish_reason: 'tool_call',
            },
          ]),
          'gen_ai.usage.input_tokens': 9,
          'gen_ai.usage.output_tokens': 4,
          'gen_ai.usage.total_tokens': 13,
          'traceloop.workflow.name': 'greet',
        },
        { name: 'chat gpt-4o-mini', kind: 3 },
      ),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.usage).toEqual({ tokensIn: 9, tokensOut: 4, cachedIn: 0, cacheWriteIn: 0, reasoning: 0 });
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_q', name: 'search', arguments: { q: 'hi' } }] },
    ]);
  });

  it('framework spans: workflow and agent are agents (entity name names only an agent kind), tool is a tool, task is other', () => {
    const wf = mapSpan(
      span({ 'traceloop.span.kind': 'workflow', 'traceloop.entity.name': 'weather_flow' }, { name: 'weather_flow.workflow' }),
    );
    expect(wf).toMatchObject({ spanClass: 'agent', agentId: '', operation: 'workflow' });
    const ag = mapSpan(span({ 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'travel_agent' }, { name: 'travel_agent.agent' }));
    expect(ag).toMatchObject({ spanClass: 'agent', agentId: 'travel_agent' });
    expect(ag.explain.mapped['agentId']).toBe('traceloop.entity.name');
    const tool = mapSpan(
      span(
        {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'get_weather',
          'traceloop.entity.input': json({ args: [], kwargs: { city: 'Paris' } }),
          'traceloop.entity.output': '"sunny"',
        },
        { name: 'get_weather.tool' },
      ),
    );
    expect(tool).toMatchObject({
      spanClass: 'tool',
      toolName: 'get_weather',
      toolArguments: { args: [], kwargs: { city: 'Paris' } },
      toolResult: '"sunny"',
    });
    expect(mapSpan(span({ 'traceloop.span.kind': 'task', 'traceloop.entity.name': 'fmt' })).spanClass).toBe('other');
  });
});
