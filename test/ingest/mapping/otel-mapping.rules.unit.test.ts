// The mapper's rules one by one: provider normalisation and inference, usage dialects and their
// conversion to OpenTelemetry semantics, provided cost, template usages, errors.
import { describe, expect, it } from 'vitest';
import { mapSpan, normaliseProvider, providerFromHost, providerFromModel } from '../../../src/ingest/mapping/index.ts';
import { event, json, span } from '../../helpers/spans.ts';

const chat = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'some-model' };

describe('provider', () => {
  it('normalises spellings to the semconv values', () => {
    const cases: Array<[string, string]> = [
      ['openai', 'openai'],
      ['OpenAI', 'openai'],
      ['xai', 'x_ai'],
      ['vertex_ai', 'gcp.vertex_ai'],
      ['vertexai', 'gcp.vertex_ai'],
      ['gemini', 'gcp.gemini'],
      ['az.ai.inference', 'azure.ai.inference'],
      ['az.ai.openai', 'azure.ai.openai'],
      ['azure', 'azure.ai.openai'],
      ['mistralai', 'mistral_ai'],
      ['amazon', 'aws.bedrock'],
      ['aws', 'aws.bedrock'],
      ['amazon-bedrock', 'aws.bedrock'],
      ['openai.chat', 'openai'],
      ['openai.responses', 'openai'],
      ['anthropic.messages', 'anthropic'],
      ['google.vertex.chat', 'gcp.vertex_ai'],
      ['vertex.anthropic.messages', 'gcp.vertex_ai'],
      ['google.generative-ai', 'gcp.gemini'],
      ['groq.chat', 'groq'],
      ['deepseek.chat', 'deepseek'],
      ['cohere.chat', 'cohere'],
      ['xai.chat', 'x_ai'],
      ['mistral.chat', 'mistral_ai'],
    ];
    for (const [raw, want] of cases) expect(normaliseProvider(raw), raw).toEqual({ kind: 'vendor', value: want });
    expect(normaliseProvider('strands-agents')).toEqual({ kind: 'framework', value: 'strands-agents' });
    expect(normaliseProvider('gcp.vertex.agent')).toEqual({ kind: 'framework', value: 'gcp.vertex.agent' });
    expect(normaliseProvider('spring_ai')).toEqual({ kind: 'framework', value: 'spring_ai' });
    expect(normaliseProvider('ollama')).toEqual({ kind: 'unknown', value: 'ollama' });
    expect(normaliseProvider('togetherai.chat')).toEqual({ kind: 'unknown', value: 'togetherai' });
  });

  it('infers the vendor from a model id', () => {
    const cases: Array<[string, string | undefined]> = [
      ['gpt-4o', 'openai'],
      ['o3-mini', 'openai'],
      ['text-embedding-3-small', 'openai'],
      ['claude-3-haiku-20240307', 'anthropic'],
      ['claude-3-5-sonnet-v2@20241022', 'gcp.vertex_ai'],
      ['anthropic.claude-3-haiku-20240307-v1:0', 'aws.bedrock'],
      ['eu.anthropic.claude-sonnet-4-20250514-v1:0', 'aws.bedrock'],
      ['arn:aws:bedrock:us-east-1:123:inference-profile/x', 'aws.bedrock'],
      ['gemini-2.0-flash', 'gcp.gemini'],
      ['models/gemini-1.5-pro', 'gcp.gemini'],
      ['projects/p/locations/us-central1/publishers/google/models/gemini-1.5-pro', 'gcp.vertex_ai'],
      ['mistral-large-latest', 'mistral_ai'],
      ['codestral-latest', 'mistral_ai'],
      ['grok-4', 'x_ai'],
      ['command-r-plus', 'cohere'],
      ['deepseek-chat', 'deepseek'],
      ['sonar-pro', 'perplexity'],
      ['kimi-k2', 'moonshot_ai'],
      ['openai/gpt-4o', 'openai'],
      ['llama-3.1-8b-instant', undefined],
    ];
    for (const [model, want] of cases) expect(providerFromModel(model), model).toBe(want);
  });

  it('infers the vendor from server.address', () => {
    const cases: Array<[string, string | undefined]> = [
      ['api.openai.com', 'openai'],
      ['my-res.openai.azure.com', 'azure.ai.openai'],
      ['my-res.services.ai.azure.com', 'azure.ai.inference'],
      ['api.anthropic.com', 'anthropic'],
      ['bedrock-runtime.us-east-1.amazonaws.com', 'aws.bedrock'],
      ['us-central1-aiplatform.googleapis.com', 'gcp.vertex_ai'],
      ['generativelanguage.googleapis.com', 'gcp.gemini'],
      ['api.x.ai', 'x_ai'],
      ['api.groq.com:443', 'groq'],
      ['api.mistral.ai', 'mistral_ai'],
      ['api.deepseek.com', 'deepseek'],
      ['notx.ai', undefined],
      ['127.0.0.1', undefined],
      ['localhost', undefined],
    ];
    for (const [host, want] of cases) expect(providerFromHost(host), host).toBe(want);
  });

  it('a framework name falls through to the next key, then to inference', () => {
    const m = mapSpan(span({ ...chat, 'gen_ai.provider.name': 'strands-agents', 'gen_ai.system': 'anthropic' }));
    expect(m.provider).toBe('anthropic');
    expect(m.explain.mapped['provider']).toBe('gen_ai.system (anthropic)');
    const host = mapSpan(span({ ...chat, 'gen_ai.system': 'strands-agents', 'server.address': 'bedrock-runtime.eu-west-1.amazonaws.com' }));
    expect(host.provider).toBe('aws.bedrock');
    expect(host.explain.mapped['provider']).toBe(
      'inferred from server.address (bedrock-runtime.eu-west-1.amazonaws.com → aws.bedrock); gen_ai.system=strands-agents names the framework',
    );
  });

  it('no provider key: inferred from server.address, else the model (OpenInference omits llm.provider for 127.0.0.1)', () => {
    expect(
      mapSpan(span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'deepseek-chat', 'server.address': 'api.deepseek.com' }))
        .provider,
    ).toBe('deepseek');
    const oi = mapSpan(span({ 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini', 'llm.system': 'openai' }));
    expect(oi.provider).toBe('openai');
    const none = mapSpan(span({ 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini' }));
    expect(none.provider).toBe('openai');
    expect(none.explain.mapped['provider']).toBe('inferred from the model (gpt-4o-mini → openai)');
    expect(mapSpan(span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'llama3' })).provider).toBe('');
  });

  it('OpenInference llm.provider (host) wins over llm.system (product): azure → azure.ai.openai', () => {
    expect(
      mapSpan(span({ 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o', 'llm.provider': 'azure', 'llm.system': 'openai' }))
        .provider,
    ).toBe('azure.ai.openai');
  });

  it('the OpenAI client pointed at another vendor: server.address wins over "openai"', () => {
    const m = mapSpan(span({ ...chat, 'gen_ai.system': 'openai', 'server.address': 'my-res.openai.azure.com' }));
    expect(m.provider).toBe('azure.ai.openai');
    expect(m.explain.ignored).toContainEqual({ key: 'gen_ai.system', reason: 'the OpenAI client was pointed at my-res.openai.azure.com' });
    expect(mapSpan(span({ ...chat, 'gen_ai.provider.name': 'openai', 'server.address': 'api.groq.com' })).provider).toBe('groq');
    expect(mapSpan(span({ ...chat, 'gen_ai.provider.name': 'openai', 'server.address': 'api.openai.com' })).provider).toBe('openai');
  });

  it('an unknown vendor is kept as sent (lower-cased)', () => {
    expect(mapSpan(span({ ...chat, 'gen_ai.system': 'Ollama' })).provider).toBe('ollama');
  });
});

describe('usage', () => {
  const usageOf = (attrs: Record<string, unknown>) => mapSpan(span({ ...chat, ...(attrs as Record<string, never>) }));

  it('cache write: the 2026 name, the v1.40 name and the underscore name', () => {
    for (const key of [
      'gen_ai.usage.cache_write.input_tokens',
      'gen_ai.usage.cache_creation.input_tokens',
      'gen_ai.usage.cache_creation_input_tokens',
      'gen_ai.usage.cache_write_input_tokens',
      'llm.token_count.prompt_details.cache_write',
    ]) {
      expect(usageOf({ 'gen_ai.usage.input_tokens': 1000, 'gen_ai.usage.output_tokens': 10, [key]: 300 }).usage, key).toEqual({
        tokensIn: 1000,
        tokensOut: 10,
        cachedIn: 0,
        cacheWriteIn: 300,
        reasoning: 0,
      });
    }
    const both = usageOf({
      'gen_ai.usage.input_tokens': 1000,
      'gen_ai.usage.cache_write.input_tokens': 300,
      'gen_ai.usage.cache_creation.input_tokens': 300,
    });
    expect(both.explain.ignored).toContainEqual({
      key: 'gen_ai.usage.cache_creation.input_tokens',
      reason: 'superseded by gen_ai.usage.cache_write.input_tokens',
    });
  });

  it('input that excludes the cache (cache > input, Anthropic-style) is converted to include it', () => {
    const m = usageOf({
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 500,
      'gen_ai.usage.cache_creation.input_tokens': 100,
    });
    expect(m.usage).toEqual({ tokensIn: 610, tokensOut: 50, cachedIn: 500, cacheWriteIn: 100, reasoning: 0 });
    expect(m.explain.mapped['usage.conversion']).toBe(
      'gen_ai.usage.input_tokens excluded the cache (cache read + write 600 > input 10): added',
    );
  });

  it('reasoning inside output is kept; reasoning larger than output is added', () => {
    expect(
      usageOf({ 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 300, 'gen_ai.usage.reasoning.output_tokens': 200 }).usage,
    ).toEqual({ tokensIn: 10, tokensOut: 300, cachedIn: 0, cacheWriteIn: 0, reasoning: 200 });
    expect(
      usageOf({ 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 100, 'gen_ai.usage.reasoning_tokens': 200 }).usage,
    ).toEqual({ tokensIn: 10, tokensOut: 300, cachedIn: 0, cacheWriteIn: 0, reasoning: 200 });
    expect(
      usageOf({ 'llm.token_count.prompt': 10, 'llm.token_count.completion': 300, 'llm.token_count.completion_details.reasoning': 100 })
        .usage?.reasoning,
    ).toBe(100);
  });

  it('a total equal to input + output + cache + reasoning shows both were excluded', () => {
    const m = usageOf({
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 20,
      'gen_ai.usage.reasoning.output_tokens': 10,
      'gen_ai.usage.total_tokens': 180,
    });
    expect(m.usage).toEqual({ tokensIn: 120, tokensOut: 60, cachedIn: 20, cacheWriteIn: 0, reasoning: 10 });
    const inclusive = usageOf({
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 20,
      'gen_ai.usage.total_tokens': 150,
    });
    expect(inclusive.usage).toMatchObject({ tokensIn: 100, tokensOut: 50 });
  });

  it('counts from int, double or string; a malformed count is ignored and the next key used', () => {
    expect(
      usageOf({ 'gen_ai.usage.input_tokens': '42', 'gen_ai.usage.output_tokens': 7.0, 'gen_ai.usage.cache_read.input_tokens': ' 2 ' })
        .usage,
    ).toEqual({ tokensIn: 42, tokensOut: 7, cachedIn: 2, cacheWriteIn: 0, reasoning: 0 });
    const bad = usageOf({ 'gen_ai.usage.input_tokens': 'abc', 'gen_ai.usage.prompt_tokens': 12, 'gen_ai.usage.output_tokens': -5 });
    expect(bad.usage).toEqual({ tokensIn: 12, tokensOut: 0, cachedIn: 0, cacheWriteIn: 0, reasoning: 0 });
    expect(bad.explain.ignored).toContainEqual({ key: 'gen_ai.usage.input_tokens', reason: 'not a token count: "abc"' });
    expect(bad.explain.ignored).toContainEqual({ key: 'gen_ai.usage.output_tokens', reason: 'not a token count: -5' });
    expect(bad.explain.mapped['usage']).toBe('gen_ai.usage.prompt_tokens');
  });

  it('undefined when the span carries no counts; a lone total cannot be split', () => {
    expect(usageOf({}).usage).toBeUndefined();
    const total = usageOf({ 'llm.usage.total_tokens': 60 });
    expect(total.usage).toBeUndefined();
    expect(total.explain.ignored).toContainEqual({
      key: 'llm.usage.total_tokens',
      reason: 'a total without input and output counts cannot be split',
    });
  });

  it('AI SDK v6 noCacheTokens alone: input = noCache + cache read + cache write', () => {
    const m = usageOf({
      'ai.usage.inputTokenDetails.noCacheTokens': 600,
      'ai.usage.inputTokenDetails.cacheReadTokens': 400,
      'ai.usage.inputTokenDetails.cacheWriteTokens': 100,
      'ai.usage.outputTokens': 5,
    });
    expect(m.usage).toEqual({ tokensIn: 1100, tokensOut: 5, cachedIn: 400, cacheWriteIn: 100, reasoning: 0 });
  });
});

describe('provided cost', () => {
  const cost = (attrs: Record<string, string | number>, cls: Record<string, string> = chat) => mapSpan(span({ ...cls, ...attrs }));

  it('keeps the exact decimal spelling', () => {
    expect(cost({ 'gen_ai.usage.cost': 0.0000123 }).providedCostUsd).toBe('0.0000123');
    expect(cost({ 'gen_ai.usage.cost': 1e-7 }).providedCostUsd).toBe('0.0000001');
    expect(cost({ 'gen_ai.usage.cost': 0.1 }).providedCostUsd).toBe('0.1');
    expect(cost({ 'gen_ai.usage.cost': '0.00150' }).providedCostUsd).toBe('0.0015');
    expect(cost({ 'gen_ai.usage.cost': '00.50' }).providedCostUsd).toBe('0.5');
    expect(cost({ 'gen_ai.usage.cost': '1.5e-7' }).providedCostUsd).toBe('0.00000015');
    expect(cost({ 'gen_ai.usage.cost': 0 }).providedCostUsd).toBe('0');
    expect(cost({ 'llm.cost.total': 0.002 }).providedCostUsd).toBe('0.002');
    expect(cost({ 'operation.cost': '12' }).providedCostUsd).toBe('12');
  });

  it('gen_ai.usage.cost › llm.cost.total › operation.cost; garbage and negatives ignored', () => {
    const m = cost({ 'gen_ai.usage.cost': 'n/a', 'llm.cost.total': -1, 'operation.cost': 0.25 });
    expect(m.providedCostUsd).toBe('0.25');
    expect(m.explain.ignored).toContainEqual({ key: 'gen_ai.usage.cost', reason: 'not a decimal amount: "n/a"' });
    expect(m.explain.ignored).toContainEqual({ key: 'llm.cost.total', reason: 'not a decimal amount: -1' });
    expect(cost({ 'gen_ai.usage.cost': 0.5, 'llm.cost.total': 0.7 }).providedCostUsd).toBe('0.5');
  });

  it('a tool or other span states no cost', () => {
    const m = cost({ 'gen_ai.usage.cost': 0.5 }, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' });
    expect(m.providedCostUsd).toBeUndefined();
    expect(m.explain.ignored).toContainEqual({ key: 'gen_ai.usage.cost', reason: 'tool span: only inference spans count usage' });
  });
});

describe('template usages', () => {
  it('traceloom.prompt.* with inputs as a JSON object string, version as int or label', () => {
    expect(
      mapSpan(
        span({
          ...chat,
          'traceloom.prompt.id': 'greeting',
          'traceloom.prompt.version': 3,
          'traceloom.prompt.inputs': json({ name: 'Ada' }),
        }),
      ).promptUsages,
    ).toEqual([{ promptId: 'greeting', versionRef: '3', inputs: { name: 'Ada' } }]);
    expect(
      mapSpan(
        span({
          'traceloom.prompt.id': 'greeting',
          'traceloom.prompt.version': 'production',
          'traceloom.prompt.inputs': { name: 'Ada', n: 2 },
        }),
      ).promptUsages,
    ).toEqual([{ promptId: 'greeting', versionRef: 'production', inputs: { name: 'Ada', n: 2 } }]);
    expect(mapSpan(span({ 'traceloom.prompt.id': 'greeting' })).promptUsages).toEqual([{ promptId: 'greeting' }]);
  });

  it('malformed inputs are ignored, the usage is kept', () => {
    const m = mapSpan(span({ 'traceloom.prompt.id': 'greeting', 'traceloom.prompt.inputs': '{"name": Ada}' }));
    expect(m.promptUsages).toEqual([{ promptId: 'greeting' }]);
    expect(m.explain.ignored).toContainEqual({ key: 'traceloom.prompt.inputs', reason: 'malformed JSON: "{\\"name\\": Ada}"' });
    const arr = mapSpan(span({ 'traceloom.prompt.id': 'greeting', 'traceloom.prompt.inputs': '[1,2]' }));
    expect(arr.promptUsages).toEqual([{ promptId: 'greeting' }]);
    expect(arr.explain.ignored).toContainEqual({ key: 'traceloom.prompt.inputs', reason: 'not a JSON object: "[1,2]"' });
    const noId = mapSpan(span({ 'traceloom.prompt.version': '2' }));
    expect(noId.promptUsages).toEqual([]);
    expect(noId.explain.ignored).toContainEqual({ key: 'traceloom.prompt.version', reason: 'no traceloom.prompt.id on the span' });
  });

  it('semconv gen_ai.prompt.name / version / variable.* (next to Traceloop gen_ai.prompt.N.* messages)', () => {
    const m = mapSpan(
      span({
        ...chat,
        'gen_ai.prompt.name': 'weather',
        'gen_ai.prompt.version': '4',
        'gen_ai.prompt.variable.city': 'Paris',
        'gen_ai.prompt.variable.days': 3,
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Weather in Paris for 3 days?',
      }),
    );
    expect(m.promptUsages).toEqual([{ promptId: 'weather', versionRef: '4', inputs: { city: 'Paris', days: 3 } }]);
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'Weather in Paris for 3 days?' }]);
  });

  it('langfuse.observation.prompt.name / version', () => {
    expect(mapSpan(span({ 'langfuse.observation.prompt.name': 'support', 'langfuse.observation.prompt.version': 2 })).promptUsages).toEqual(
      [{ promptId: 'support', versionRef: '2' }],
    );
  });

  it('OpenInference template version and variables complete a usage named by another key', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'LLM',
        'traceloom.prompt.id': 'weather',
        'llm.prompt_template.template': 'Weather in {city}?',
        'llm.prompt_template.version': 'v3',
        'llm.prompt_template.variables': json({ city: 'Paris' }),
      }),
    );
    expect(m.promptUsages).toEqual([{ promptId: 'weather', versionRef: 'v3', inputs: { city: 'Paris' } }]);
    expect(m.explain.mapped['promptUsages']).toBe('traceloom.prompt.id, llm.prompt_template.* (version and variables)');
  });

  it('the same id named twice is one usage; different ids are two', () => {
    expect(
      mapSpan(
        span({ 'traceloom.prompt.id': 'a', 'traceloom.prompt.version': '1', 'gen_ai.prompt.name': 'a', 'gen_ai.prompt.variable.x': 'y' }),
      ).promptUsages,
    ).toEqual([{ promptId: 'a', versionRef: '1', inputs: { x: 'y' } }]);
    expect(mapSpan(span({ 'traceloom.prompt.id': 'a', 'langfuse.observation.prompt.name': 'b' })).promptUsages).toEqual([
      { promptId: 'a' },
      { promptId: 'b' },
    ]);
  });

  it('a usage on an agent span is reported (assembly applies it to the inference spans below)', () => {
    expect(mapSpan(span({ 'gen_ai.operation.name': 'invoke_agent', 'traceloom.prompt.id': 'planner' })).promptUsages).toEqual([
      { promptId: 'planner' },
    ]);
  });
});

describe('errors', () => {
  it('status ERROR: the status message › an exception event › error.type', () => {
    const withMessage = mapSpan(
      span({ ...chat, 'error.type': 'RateLimitError' }, { statusCode: 2, statusMessage: '429 Too Many Requests' }),
    );
    expect(withMessage.errorMessage).toBe('429 Too Many Requests');
    expect(withMessage.explain.mapped['errorMessage']).toBe('status.message');
    expect(mapSpan(span({ ...chat, 'error.type': 'RateLimitError' }, { statusCode: 2 })).errorMessage).toBe('RateLimitError');
    expect(
      mapSpan(
        span(
          { ...chat, 'error.type': '_OTHER' },
          { statusCode: 2, events: [event('exception', { 'exception.type': 'ValueError', 'exception.message': 'bad input' })] },
        ),
      ).errorMessage,
    ).toBe('bad input');
    expect(mapSpan(span(chat, { statusCode: 2 })).errorMessage).toBe('');
  });

  it('error.type without status ERROR is not an error', () => {
    const m = mapSpan(span({ ...chat, 'error.type': 'timeout' }, { statusCode: 1 }));
    expect(m.errorMessage).toBe('');
    expect(m.explain.ignored).toContainEqual({ key: 'error.type', reason: 'span status is not ERROR' });
  });
});
