// The mapper on framework spans: Vercel AI SDK v4/v5/v6 (outer span, doGenerate/doStream,
// toolCall), Pydantic AI, Spring AI, Google ADK and the flat JSON form's keys (docs/otel-mapping.md).
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../../src/ingest/mapping/index.ts';
import { json, span } from '../../helpers/spans.ts';

const AGENT_REASON = 'agent span: usage is counted on its inference children';

describe('Vercel AI SDK v4', () => {
  it('outer ai.generateText is an agent: usage is not counted; names agent and session; prompt and text become messages', () => {
    const m = mapSpan(
      span(
        {
          'operation.name': 'ai.generateText my-fn',
          'ai.operationId': 'ai.generateText',
          'resource.name': 'my-fn',
          'ai.telemetry.functionId': 'my-fn',
          'ai.telemetry.metadata.sessionId': 'chat-42',
          'ai.model.id': 'gpt-4o-mini',
          'ai.model.provider': 'openai.chat',
          'ai.prompt': json({ system: 'Be nice', prompt: 'Hi' }),
          'ai.response.text': 'Hello!',
          'ai.response.finishReason': 'stop',
          'ai.usage.promptTokens': 20,
          'ai.usage.completionTokens': 5,
        },
        { name: 'ai.generateText', scopeName: 'ai' },
      ),
    );
    expect(m).toMatchObject({
      spanClass: 'agent',
      operation: 'ai.generateText',
      model: 'gpt-4o-mini',
      provider: 'openai',
      agentId: 'my-fn',
      sessionId: 'chat-42',
    });
    expect(m.usage).toBeUndefined();
    expect(m.explain.ignored).toContainEqual({ key: 'ai.usage.promptTokens', reason: AGENT_REASON });
    expect(m.explain.ignored).toContainEqual({ key: 'ai.usage.completionTokens', reason: AGENT_REASON });
    expect(m.explain.mapped).toMatchObject({
      spanClass: 'ai.operationId (ai.generateText)',
      agentId: 'ai.telemetry.functionId',
      sessionId: 'ai.telemetry.metadata.sessionId',
      provider: 'ai.model.provider (openai.chat → openai)',
    });
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'Be nice' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'Hello!' }]);
  });

  it('ai.generateText.doGenerate is inference with ai.prompt.messages (args/result spelling)', () => {
    const m = mapSpan(
      span(
        {
          'operation.name': 'ai.generateText.doGenerate my-fn',
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.telemetry.functionId': 'my-fn',
          'ai.model.id': 'gpt-4o-mini',
          'ai.model.provider': 'openai.chat',
          'gen_ai.system': 'openai.chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
          'gen_ai.usage.input_tokens': 20,
          'gen_ai.usage.output_tokens': 5,
          'ai.usage.promptTokens': 20,
          'ai.usage.completionTokens': 5,
          'ai.prompt.messages': json([
            { role: 'system', content: 'Be nice' },
            { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
            { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', args: { city: 'Paris' } }] },
            { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'weather', result: { temp: 20 } }] },
          ]),
          'ai.response.text': 'Hello!',
        },
        { name: 'ai.generateText.doGenerate', scopeName: 'ai' },
      ),
    );
    expect(m).toMatchObject({
      spanClass: 'inference',
      operation: 'ai.generateText.doGenerate',
      model: 'gpt-4o-mini-2024-07-18',
      provider: 'openai',
      agentId: 'my-fn',
    });
    expect(m.usage).toEqual({ tokensIn: 20, tokensOut: 5, cachedIn: 0, cacheWriteIn: 0, reasoning: 0 });
    expect(m.explain.mapped['provider']).toBe('gen_ai.system (openai.chat → openai)');
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'Be nice' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', content: '{"temp":20}', tool_call_id: 'call_1', name: 'weather' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'Hello!' }]);
    expect(m.explain.mapped['inputMessages']).toBe('ai.prompt.messages');
  });

  it('ai.toolCall is a tool span with its id, arguments and result', () => {
    const m = mapSpan(
      span(
        {
          'operation.name': 'ai.toolCall my-fn',
          'ai.operationId': 'ai.toolCall',
          'ai.toolCall.name': 'weather',
          'ai.toolCall.id': 'call_1',
          'ai.toolCall.args': json({ city: 'Paris' }),
          'ai.toolCall.result': json({ temp: 20 }),
        },
        { name: 'ai.toolCall', scopeName: 'ai' },
      ),
    );
    expect(m).toMatchObject({
      spanClass: 'tool',
      toolName: 'weather',
      toolCallId: 'call_1',
      toolArguments: { city: 'Paris' },
      toolResult: { temp: 20 },
      inputMessages: [],
      outputMessages: [],
    });
  });
});

describe('Vercel AI SDK v5', () => {
  it('outer ai.streamText is an agent; usage not counted', () => {
    const m = mapSpan(
      span(
        {
          'ai.operationId': 'ai.streamText',
          'ai.model.id': 'claude-sonnet-4-20250514',
          'ai.model.provider': 'anthropic.messages',
          'ai.usage.inputTokens': 60,
          'ai.usage.outputTokens': 40,
          'ai.usage.totalTokens': 100,
        },
        { name: 'ai.streamText' },
      ),
    );
    expect(m.spanClass).toBe('agent');
    expect(m.usage).toBeUndefined();
    expect(m.provider).toBe('anthropic');
    expect(m.explain.ignored).toContainEqual({ key: 'ai.usage.inputTokens', reason: AGENT_REASON });
  });

  it("doStream with the Anthropic provider: Anthropic's own input_tokens equals inputTokens, so it excludes the cache; input/output part spelling", () => {
    const m = mapSpan(
      span(
        {
          'ai.operationId': 'ai.streamText.doStream',
          'ai.model.id': 'claude-sonnet-4-20250514',
          'ai.model.provider': 'anthropic.messages',
          'gen_ai.system': 'anthropic.messages',
          'gen_ai.request.model': 'claude-sonnet-4-20250514',
          'gen_ai.usage.input_tokens': 50,
          'gen_ai.usage.output_tokens': 40,
          'ai.usage.inputTokens': 50,
          'ai.usage.outputTokens': 40,
          'ai.usage.totalTokens': 90,
          'ai.usage.cachedInputTokens': 10,
          'ai.response.providerMetadata': json({
            anthropic: {
              cacheCreationInputTokens: 20,
              usage: { input_tokens: 50, cache_read_input_tokens: 10, cache_creation_input_tokens: 20, output_tokens: 40 },
            },
          }),
          'ai.prompt.messages': json([
            { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
            {
              role: 'assistant',
              content: [
                { type: 'reasoning', text: 'thinking' },
                { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'weather', input: { city: 'Oslo' } },
              ],
            },
            {
              role: 'tool',
              content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'weather', output: { type: 'json', value: { temp: -3 } } }],
            },
          ]),
          'ai.response.text': '',
          'ai.response.toolCalls': json([
            { toolCallType: 'function', toolCallId: 'toolu_2', toolName: 'weather', input: '{"city":"Bergen"}' },
          ]),
        },
        { name: 'ai.streamText.doStream' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'inference', provider: 'anthropic', model: 'claude-sonnet-4-20250514' });
    expect(m.usage).toEqual({ tokensIn: 80, tokensOut: 40, cachedIn: 10, cacheWriteIn: 20, reasoning: 0 });
    expect(m.explain.mapped['usage']).toBe(
      'gen_ai.usage.input_tokens, gen_ai.usage.output_tokens, ai.usage.cachedInputTokens, ai.response.providerMetadata (anthropic.usage.cache_creation_input_tokens), ai.response.providerMetadata (anthropic.usage.input_tokens)',
    );
    expect(m.explain.mapped['usage.conversion']).toBe(
      'gen_ai.usage.input_tokens is 50, ai.response.providerMetadata (anthropic.usage.input_tokens) + cache read + cache write is 80: the cache was excluded, added',
    );
    expect(m.inputMessages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', name: 'weather', arguments: { city: 'Oslo' } }] },
      { role: 'tool', content: '{"temp":-3}', tool_call_id: 'toolu_1', name: 'weather' },
    ]);
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_2', name: 'weather', arguments: { city: 'Bergen' } }] },
    ]);
  });

  it('doGenerate with the Google provider: a total that includes thoughts shows output excluded reasoning', () => {
    const m = mapSpan(
      span({
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.provider': 'google.generative-ai',
        'gen_ai.system': 'google.generative-ai',
        'gen_ai.request.model': 'gemini-2.5-flash',
        'ai.usage.inputTokens': 100,
        'ai.usage.outputTokens': 20,
        'ai.usage.reasoningTokens': 15,
        'ai.usage.totalTokens': 135,
      }),
    );
    expect(m.provider).toBe('gcp.gemini');
    expect(m.usage).toEqual({ tokensIn: 100, tokensOut: 35, cachedIn: 0, cacheWriteIn: 0, reasoning: 15 });
  });
});

describe('Vercel AI SDK v6', () => {
  const v6Usage = {
    'gen_ai.usage.input_tokens': 1000,
    'gen_ai.usage.output_tokens': 300,
    'ai.usage.inputTokens': 1000,
    'ai.usage.outputTokens': 300,
    'ai.usage.totalTokens': 1300,
    'ai.usage.reasoningTokens': 200,
    'ai.usage.cachedInputTokens': 400,
    'ai.usage.inputTokenDetails.noCacheTokens': 600,
    'ai.usage.inputTokenDetails.cacheReadTokens': 400,
    'ai.usage.inputTokenDetails.cacheWriteTokens': 0,
    'ai.usage.outputTokenDetails.textTokens': 100,
    'ai.usage.outputTokenDetails.reasoningTokens': 200,
  };

  it('outer ai.generateText repeats the aggregate: agent, not counted', () => {
    const m = mapSpan(
      span(
        {
          'ai.operationId': 'ai.generateText',
          'ai.telemetry.functionId': 'support-bot',
          'ai.model.id': 'gpt-5-mini',
          'ai.model.provider': 'openai.responses',
          ...v6Usage,
        },
        { name: 'ai.generateText' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'agent', agentId: 'support-bot', provider: 'openai' });
    expect(m.usage).toBeUndefined();
    expect(m.explain.ignored).toContainEqual({ key: 'gen_ai.usage.input_tokens', reason: AGENT_REASON });
  });

  it('doGenerate: totals include cache and reasoning already (inputTokenDetails present)', () => {
    const m = mapSpan(
      span(
        {
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.telemetry.functionId': 'support-bot',
          'ai.model.id': 'gpt-5-mini',
          'ai.model.provider': 'openai.responses',
          'gen_ai.system': 'openai.responses',
          'gen_ai.request.model': 'gpt-5-mini',
          'gen_ai.response.model': 'gpt-5-mini-2025-08-07',
          ...v6Usage,
          'ai.prompt.messages': json([
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Weather?' },
                { type: 'file', data: 'aGk=', mediaType: 'image/png' },
              ],
            },
            { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c9', toolName: 'weather', input: { city: 'Lima' } }] },
            {
              role: 'tool',
              content: [{ type: 'tool-result', toolCallId: 'c9', toolName: 'weather', output: { type: 'text', value: '20°C' } }],
            },
          ]),
          'ai.response.text': 'It is 20°C.',
        },
        { name: 'ai.generateText.doGenerate' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'inference', model: 'gpt-5-mini-2025-08-07', provider: 'openai', agentId: 'support-bot' });
    expect(m.usage).toEqual({ tokensIn: 1000, tokensOut: 300, cachedIn: 400, cacheWriteIn: 0, reasoning: 200 });
    expect(m.explain.mapped['usage.conversion']).toBeUndefined();
    expect(m.inputMessages).toEqual([
      { role: 'user', content: 'Weather?\n[image/png]' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c9', name: 'weather', arguments: { city: 'Lima' } }] },
      { role: 'tool', content: '20°C', tool_call_id: 'c9', name: 'weather' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'It is 20°C.' }]);
  });

  it('ai.embed wraps ai.embed.doEmbed: only doEmbed counts', () => {
    expect(mapSpan(span({ 'ai.operationId': 'ai.embed', 'ai.model.id': 'text-embedding-3-small', 'ai.usage.tokens': 5 })).spanClass).toBe(
      'other',
    );
    const doEmbed = mapSpan(
      span({
        'ai.operationId': 'ai.embed.doEmbed',
        'ai.model.id': 'text-embedding-3-small',
        'ai.model.provider': 'openai.embedding',
        'ai.usage.tokens': 5,
      }),
    );
    expect(doEmbed).toMatchObject({ spanClass: 'inference', provider: 'openai', usage: { tokensIn: 5, tokensOut: 0 } });
  });

  it('ai.toolCall (v6) is a tool span', () => {
    const m = mapSpan(
      span(
        {
          'ai.operationId': 'ai.toolCall',
          'ai.toolCall.name': 'weather',
          'ai.toolCall.id': 'c9',
          'ai.toolCall.args': '{"city":"Lima"}',
          'ai.toolCall.result': '"20°C"',
        },
        { name: 'ai.toolCall' },
      ),
    );
    expect(m).toMatchObject({
      spanClass: 'tool',
      toolName: 'weather',
      toolCallId: 'c9',
      toolArguments: { city: 'Lima' },
      toolResult: '"20°C"',
    });
  });
});

describe('Pydantic AI', () => {
  it('v3+ chat span: semconv messages, operation.cost as an exact decimal', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.system_instructions': json([{ type: 'text', content: 'Be a roulette wheel.' }]),
          'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: 'Put my money on 18' }] }]),
          'gen_ai.output.messages': json([
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'pyd_1', name: 'roulette_wheel', arguments: { square: 18 } }],
              finish_reason: 'tool_call',
            },
          ]),
          'gen_ai.usage.input_tokens': 10,
          'gen_ai.usage.output_tokens': 2,
          'operation.cost': 0.000035,
          'logfire.msg': 'chat gpt-4o',
        },
        { name: 'chat gpt-4o' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'inference', model: 'gpt-4o-2024-08-06', provider: 'openai', providedCostUsd: '0.000035' });
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'Be a roulette wheel.' },
      { role: 'user', content: 'Put my money on 18' },
    ]);
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'pyd_1', name: 'roulette_wheel', arguments: { square: 18 } }] },
    ]);
  });

  it('invoke_agent with aggregated usage and cost: agent, neither counted', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'roulette',
          agent_name: 'roulette',
          'gen_ai.usage.input_tokens': 30,
          'gen_ai.usage.output_tokens': 6,
          'gen_ai.aggregated_usage.input_tokens': 30,
          'operation.cost': 0.0001,
        },
        { name: 'invoke_agent roulette' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'agent', agentId: 'roulette' });
    expect(m.usage).toBeUndefined();
    expect(m.providedCostUsd).toBeUndefined();
    expect(m.explain.ignored).toContainEqual({ key: 'operation.cost', reason: AGENT_REASON });
  });

  it('execute_tool with gen_ai.tool.call.arguments / result', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'roulette_wheel',
          'gen_ai.tool.call.id': 'pyd_1',
          'gen_ai.tool.call.arguments': json({ square: 18 }),
          'gen_ai.tool.call.result': 'winner',
        },
        { name: 'execute_tool roulette_wheel' },
      ),
    );
    expect(m).toMatchObject({
      spanClass: 'tool',
      toolName: 'roulette_wheel',
      toolCallId: 'pyd_1',
      toolArguments: { square: 18 },
      toolResult: 'winner',
    });
  });

  it('v2: `agent run` with agent_name and a model is an agent; `running tool` is a tool', () => {
    const run = mapSpan(span({ agent_name: 'support', model_name: 'gpt-4o', 'gen_ai.request.model': 'gpt-4o' }, { name: 'agent run' }));
    expect(run).toMatchObject({ spanClass: 'agent', agentId: 'support' });
    const tool = mapSpan(
      span(
        { 'gen_ai.tool.name': 'roulette_wheel', tool_arguments: json({ square: 18 }), tool_response: 'loser' },
        { name: 'running tool' },
      ),
    );
    expect(tool).toMatchObject({ spanClass: 'tool', toolName: 'roulette_wheel', toolArguments: { square: 18 }, toolResult: 'loser' });
  });
});

describe('Spring AI', () => {
  it('ChatClient span (framework, spring_ai) is an agent with the conversation id; spring_ai is not a provider', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'framework',
          'gen_ai.system': 'spring_ai',
          'spring.ai.kind': 'chat_client',
          'spring.ai.chat.client.conversation.id': 'conv-7',
        },
        { name: 'spring_ai chat_client' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'agent', operation: 'framework', provider: '', sessionId: 'conv-7' });
    expect(m.explain.ignored).toContainEqual({
      key: 'gen_ai.system',
      reason: 'names the framework or client (spring_ai), not the LLM vendor',
    });
  });

  it('model span with the gen_ai.content.* prompt and completion', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.usage.input_tokens': 10,
          'gen_ai.usage.output_tokens': 5,
          'gen_ai.usage.total_tokens': 15,
          'gen_ai.prompt': 'Tell me a joke',
          'gen_ai.completion': 'Why did the chicken...',
        },
        { name: 'chat gpt-4o' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'inference', provider: 'openai', usage: { tokensIn: 10, tokensOut: 5 } });
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'Tell me a joke' }]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'Why did the chicken...' }]);
  });

  it('tool_call span is a tool; advisor span is other', () => {
    const tool = mapSpan(
      span({
        'gen_ai.operation.name': 'framework',
        'gen_ai.system': 'spring_ai',
        'spring.ai.kind': 'tool_call',
        'spring.ai.tool.definition.name': 'currentWeather',
        'spring.ai.tool.call.arguments': json({ location: 'Oslo' }),
        'spring.ai.tool.call.result': 'cold',
      }),
    );
    expect(tool).toMatchObject({ spanClass: 'tool', toolName: 'currentWeather', toolArguments: { location: 'Oslo' }, toolResult: 'cold' });
    expect(mapSpan(span({ 'gen_ai.operation.name': 'framework', 'spring.ai.kind': 'advisor' })).spanClass).toBe('other');
  });
});

describe('Google ADK', () => {
  it('invoke_agent is an agent; gcp.vertex.agent is the framework', () => {
    const m = mapSpan(
      span(
        { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather_agent', 'gen_ai.system': 'gcp.vertex.agent' },
        { name: 'invoke_agent weather_agent' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'agent', agentId: 'weather_agent', provider: '' });
  });

  it('call_llm: inference by its model; vendor JSON messages; Gemini output excludes thoughts', () => {
    const m = mapSpan(
      span(
        {
          'gen_ai.system': 'gcp.vertex.agent',
          'gen_ai.request.model': 'gemini-2.5-flash',
          'gen_ai.conversation.id': 'sess-adk',
          'gcp.vertex.agent.session_id': 'sess-adk',
          'gcp.vertex.agent.invocation_id': 'e-1',
          'gcp.vertex.agent.llm_request': json({
            model: 'gemini-2.5-flash',
            config: { system_instruction: 'You tell weather.' },
            contents: [
              { role: 'user', parts: [{ text: 'Weather in NYC?' }] },
              { role: 'model', parts: [{ function_call: { id: 'adk-1', name: 'get_weather', args: { city: 'NYC' } } }] },
              { role: 'user', parts: [{ function_response: { id: 'adk-1', name: 'get_weather', response: { result: 'sunny' } } }] },
            ],
          }),
          'gcp.vertex.agent.llm_response': json({
            content: { role: 'model', parts: [{ text: 'Sunny in NYC.' }] },
            usage_metadata: { candidates_token_count: 10 },
          }),
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.usage.output_tokens': 10,
          'gen_ai.usage.experimental.reasoning_tokens': 5,
          'gen_ai.response.finish_reasons': ['STOP'],
        },
        { name: 'call_llm' },
      ),
    );
    expect(m).toMatchObject({ spanClass: 'inference', model: 'gemini-2.5-flash', provider: 'gcp.gemini', sessionId: 'sess-adk' });
    expect(m.usage).toEqual({ tokensIn: 100, tokensOut: 15, cachedIn: 0, cacheWriteIn: 0, reasoning: 5 });
    expect(m.explain.mapped['usage.conversion']).toBe(
      'Google ADK output_tokens excludes thoughts: gen_ai.usage.experimental.reasoning_tokens added',
    );
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'You tell weather.' },
      { role: 'user', content: 'Weather in NYC?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'adk-1', name: 'get_weather', arguments: { city: 'NYC' } }] },
      { role: 'tool', content: '{"result":"sunny"}', tool_call_id: 'adk-1', name: 'get_weather' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'Sunny in NYC.' }]);
    expect(m.explain.mapped['inputMessages']).toBe('gcp.vertex.agent.llm_request');
  });

  it('generate_content span (newer ADK) is inference; execute_tool uses the ADK tool keys', () => {
    expect(
      mapSpan(
        span(
          { 'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'gemini-2.5-pro' },
          { name: 'generate_content gemini-2.5-pro' },
        ),
      ).spanClass,
    ).toBe('inference');
    const tool = mapSpan(
      span(
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.tool.call.id': 'adk-1',
          'gcp.vertex.agent.tool_call_args': json({ city: 'NYC' }),
          'gcp.vertex.agent.tool_response': json({ result: 'sunny' }),
          'gcp.vertex.agent.llm_request': '{}',
          'gcp.vertex.agent.llm_response': '{}',
        },
        { name: 'execute_tool get_weather' },
      ),
    );
    expect(tool).toMatchObject({
      spanClass: 'tool',
      toolName: 'get_weather',
      toolCallId: 'adk-1',
      toolArguments: { city: 'NYC' },
      toolResult: { result: 'sunny' },
      inputMessages: [],
      outputMessages: [],
    });
  });
});

describe('flat JSON form keys', () => {
  it('gen_ai.model.id is accepted as the model (last), numbers as strings and doubles', () => {
    const m = mapSpan(
      span({
        'gen_ai.operation.name': 'chat',
        'gen_ai.model.id': 'claude-3-5-sonnet-20241022',
        'gen_ai.system': 'anthropic',
        'gen_ai.usage.input_tokens': '1200',
        'gen_ai.usage.output_tokens': 300.0,
      }),
    );
    expect(m).toMatchObject({
      spanClass: 'inference',
      model: 'claude-3-5-sonnet-20241022',
      provider: 'anthropic',
      usage: { tokensIn: 1200, tokensOut: 300 },
    });
    expect(m.explain.mapped['model']).toBe('gen_ai.model.id');
  });

  it('a span with only gen_ai.model.id is inference; gen_ai.model.id loses to gen_ai.request.model', () => {
    const m = mapSpan(span({ 'gen_ai.model.id': 'grok-3', 'gen_ai.system': 'xai' }));
    expect(m).toMatchObject({ spanClass: 'inference', model: 'grok-3', provider: 'x_ai' });
    const both = mapSpan(span({ 'gen_ai.model.id': 'alias', 'gen_ai.request.model': 'gpt-4o' }));
    expect(both.model).toBe('gpt-4o');
    expect(both.explain.ignored).toContainEqual({ key: 'gen_ai.model.id', reason: 'superseded by gen_ai.request.model ("alias")' });
  });
});
