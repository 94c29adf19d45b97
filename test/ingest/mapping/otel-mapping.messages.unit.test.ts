// Message normalisation details: part kinds, roles, tool results in every spelling, source
// precedence, and the raw input.value / output.value fallbacks.
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../../src/ingest/mapping/index.ts';
import { json, span } from '../../helpers/spans.ts';

const inference = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' };
const inputOf = (messages: unknown) => mapSpan(span({ ...inference, 'gen_ai.input.messages': json(messages) })).inputMessages;

describe('semconv parts', () => {
  it('text parts are joined; media become placeholders; reasoning and server tool parts are dropped; generic parts with text are text', () => {
    expect(
      inputOf([
        {
          role: 'user',
          parts: [
            { type: 'text', content: 'one' },
            null,
            5,
            'bare string',
            { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'iVBORw0KGgo=' },
            { type: 'uri', modality: 'image', uri: 'https://x.test/a.png' },
            { type: 'file', modality: 'document', file_id: 'file-1' },
            { type: 'reasoning', content: 'hmm' },
            { type: 'server_tool_call', name: 'web_search', server_tool_call: { type: 'web_search' } },
            { type: 'custom_thing', content: 'generic text' },
          ],
        },
      ]),
    ).toEqual([{ role: 'user', content: 'one\nbare string\n[image]\n[image https://x.test/a.png]\n[document file-1]\ngeneric text' }]);
  });

  it('Gemini role model → assistant; a tool result in `result` (attribute-registry spelling) as well as `response`', () => {
    expect(
      inputOf([
        {
          role: 'model',
          parts: [
            { type: 'text', content: 'calling' },
            { type: 'tool_call', id: 'g1', name: 'f', arguments: '{"a":1}' },
          ],
        },
        {
          role: 'tool',
          parts: [
            { type: 'tool_call_response', id: 'g1', result: { ok: true } },
            { type: 'tool_call_response', id: 'g2', response: 'plain' },
          ],
        },
      ]),
    ).toEqual([
      { role: 'assistant', content: 'calling', tool_calls: [{ id: 'g1', name: 'f', arguments: { a: 1 } }] },
      { role: 'tool', content: '{"ok":true}', tool_call_id: 'g1' },
      { role: 'tool', content: 'plain', tool_call_id: 'g2' },
    ]);
  });

  it('a tool call without an id keeps the call, with id ""; arguments that are not JSON stay text', () => {
    expect(inputOf([{ role: 'assistant', parts: [{ type: 'tool_call', id: null, name: 'f', arguments: 'not json' }] }])).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: '', name: 'f', arguments: 'not json' }] },
    ]);
  });

  it('OpenAI-format messages inside gen_ai.input.messages are accepted too (content strings, tool_calls, tool_call_id)', () => {
    expect(
      inputOf([
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://x.test/i.png' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', name: 'f', content: '{"y":2}' },
      ]),
    ).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'look\n[image https://x.test/i.png]' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'f', arguments: { x: 1 } }] },
      { role: 'tool', content: '{"y":2}', tool_call_id: 'c1', name: 'f' },
    ]);
  });

  it('Anthropic content blocks: tool_use and tool_result (results first as tool messages, then the text)', () => {
    expect(
      inputOf([
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '...' },
            { type: 'text', text: 'let me check' },
            { type: 'tool_use', id: 'tu1', name: 'calc', input: { e: '6*7' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: '42' }] },
            { type: 'text', text: 'thanks' },
          ],
        },
      ]),
    ).toEqual([
      { role: 'assistant', content: 'let me check', tool_calls: [{ id: 'tu1', name: 'calc', arguments: { e: '6*7' } }] },
      { role: 'tool', content: '42', tool_call_id: 'tu1' },
      { role: 'user', content: 'thanks' },
    ]);
  });

  it('a tool result that is a JSON list of objects stays the tool’s text', () => {
    expect(inputOf([{ role: 'tool', tool_call_id: 'c', content: '[{"id":1},{"id":2}]' }])).toEqual([
      { role: 'tool', content: '[{"id":1},{"id":2}]', tool_call_id: 'c' },
    ]);
  });

  it('system instructions as a plain string; instructions repeated as the first input message appear once', () => {
    const m = mapSpan(
      span({
        ...inference,
        'gen_ai.system_instructions': 'Be terse.',
        'gen_ai.input.messages': json([
          { role: 'system', parts: [{ type: 'text', content: 'Be terse.' }] },
          { role: 'user', parts: [{ type: 'text', content: 'hi' }] },
        ]),
      }),
    );
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('empty message lists fall through to the next source', () => {
    const m = mapSpan(span({ ...inference, 'gen_ai.input.messages': '[]', 'input.value': 'hello' }));
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

describe('source precedence', () => {
  it('semconv attributes beat every later source, which are listed as superseded', () => {
    const m = mapSpan(
      span({
        ...inference,
        'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: 'semconv' }] }]),
        'ai.prompt.messages': json([{ role: 'user', content: 'vercel' }]),
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'openinference',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'traceloop',
        'input.value': 'raw',
        'output.value': 'raw out',
      }),
    );
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'semconv' }]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'raw out' }]);
    for (const key of ['ai.prompt.messages', 'llm.input_messages.*', 'gen_ai.prompt.N.*', 'input.value']) {
      expect(m.explain.ignored).toContainEqual({ key, reason: 'superseded by gen_ai.input.messages' });
    }
    expect(m.explain.mapped['outputMessages']).toBe('output.value');
  });

  it('input and output are chosen independently (OpenInference input messages, output.value output)', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'q',
        'output.value': json({ choices: [{ message: { role: 'assistant', content: 'a' } }] }),
      }),
    );
    expect(m.inputMessages).toEqual([{ role: 'user', content: 'q' }]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'a' }]);
  });
});

describe('input.value / output.value', () => {
  it('an OpenAI chat request and completion', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'LLM',
        'input.value': json({
          model: 'gpt-4o',
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'u' },
          ],
        }),
        'output.value': json({
          id: 'x',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
              },
            },
          ],
        }),
      }),
    );
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: null, tool_calls: [{ id: 'c', name: 'f', arguments: {} }] }]);
  });

  it('an OpenAI Responses request and response', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'LLM',
        'input.value': json({
          model: 'gpt-5',
          input: [
            { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
            { type: 'function_call_output', call_id: 'fc1', output: 'done' },
          ],
        }),
        'output.value': json({
          output: [
            { type: 'reasoning', summary: [] },
            { type: 'function_call', call_id: 'fc2', name: 'g', arguments: '{"k":1}' },
            { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
          ],
        }),
      }),
    );
    expect(m.inputMessages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'tool', content: 'done', tool_call_id: 'fc1' },
    ]);
    expect(m.outputMessages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'fc2', name: 'g', arguments: { k: 1 } }] },
      { role: 'assistant', content: 'ok' },
    ]);
  });

  it('plain text, and JSON that holds no messages, stay text', () => {
    const m = mapSpan(span({ 'openinference.span.kind': 'LLM', 'input.value': '{"question":"why?"}', 'output.value': 'because' }));
    expect(m.inputMessages).toEqual([{ role: 'user', content: '{"question":"why?"}' }]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: 'because' }]);
  });
});

describe('other wrappings', () => {
  it('LangSmith gen_ai.prompt with LangChain-serialised messages in nested arrays', () => {
    const lc = (cls: string, kwargs: object) => ({ lc: 1, type: 'constructor', id: ['langchain', 'schema', 'messages', cls], kwargs });
    const m = mapSpan(
      span({
        'langsmith.span.kind': 'llm',
        'gen_ai.system': 'openai',
        'gen_ai.prompt': json({ messages: [[lc('SystemMessage', { content: 'sys' }), lc('HumanMessage', { content: 'hi' })]] }),
        'gen_ai.completion': json({ messages: [lc('AIMessage', { content: '', tool_calls: [{ id: 'l1', name: 'f', args: { a: 1 } }] })] }),
      }),
    );
    expect(m.spanClass).toBe('inference');
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: '', tool_calls: [{ id: 'l1', name: 'f', arguments: { a: 1 } }] }]);
  });

  it('AI SDK ai.prompt with messages, and a generateObject response', () => {
    const m = mapSpan(
      span({
        'ai.operationId': 'ai.generateObject',
        'ai.prompt': json({ system: 's', messages: [{ role: 'user', content: 'u' }] }),
        'ai.response.object': json({ a: 1 }),
      }),
    );
    expect(m.spanClass).toBe('agent');
    expect(m.inputMessages).toEqual([
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
    ]);
    expect(m.outputMessages).toEqual([{ role: 'assistant', content: '{"a":1}' }]);
  });
});
