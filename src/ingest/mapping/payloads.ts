// Message payloads in SDK-specific request/response shapes: the AI SDK's prompt and response
// attributes, and OpenInference's raw input.value / output.value (a chat request or completion,
// an OpenAI Responses request or response, or plain text).
import type { NormalizedMessage } from '../../executions/span.ts';
import { asStr, isObj, parseLoose, toText, type SpanCtx } from './context.ts';
import { normalizeMessage, normalizeMessages } from './normalize.ts';

type Msgs = NormalizedMessage[];

export function vercelPrompt(ctx: SpanCtx): Msgs {
  if (ctx.has('ai.prompt.messages')) return normalizeMessages(ctx.structured('ai.prompt.messages'), 'user');
  const p = ctx.structured('ai.prompt'); // outer spans: {system?, prompt?} or {system?, messages}
  const out: Msgs = [];
  if (!isObj(p)) return typeof p === 'string' ? [{ role: 'user', content: p }] : out;
  const system = asStr(p['system']);
  if (system) out.push({ role: 'system', content: p['system'] as string });
  if (Array.isArray(p['messages'])) normalizeMessages(p['messages'], 'user', out);
  else if (typeof p['prompt'] === 'string') out.push({ role: 'user', content: p['prompt'] });
  else if (Array.isArray(p['prompt'])) normalizeMessages(p['prompt'], 'user', out);
  return out;
}

export function vercelResponse(ctx: SpanCtx): Msgs {
  const text = ctx.a['ai.response.text'] ?? ctx.a['ai.result.text'];
  const object = ctx.a['ai.response.object'] ?? ctx.a['ai.result.object'];
  const calls = ctx.has('ai.response.toolCalls') ? ctx.structured('ai.response.toolCalls') : ctx.structured('ai.result.toolCalls');
  const hasCalls = Array.isArray(calls) && calls.length > 0;
  if (typeof text !== 'string' && object === undefined && !hasCalls) return [];
  // An empty text beside tool calls is no text at all.
  const content = typeof text === 'string' && (text !== '' || !hasCalls) ? text : object !== undefined ? toText(object) : null;
  const out: Msgs = [];
  const msg: NormalizedMessage = { role: 'assistant', content };
  out.push(msg);
  if (hasCalls) {
    const withCalls: Msgs = [];
    normalizeMessage({ role: 'assistant', content: null, tool_calls: calls }, 'assistant', withCalls);
    if (withCalls[0]?.tool_calls) msg.tool_calls = withCalls[0].tool_calls;
  }
  return out;
}

/** input.value: a request JSON (messages / input), a list of messages, or text. */
export function valueInput(ctx: SpanCtx): Msgs {
  const raw = ctx.a['input.value'];
  const v = typeof raw === 'string' ? parseLoose(raw) : raw;
  if (Array.isArray(v)) return normalizeMessages(v, 'user');
  if (isObj(v)) {
    if (Array.isArray(v['messages'])) return normalizeMessages(v['messages'], 'user');
    if (Array.isArray(v['input'])) return normalizeMessages(v['input'], 'user');
    if (typeof v['input'] === 'string' || typeof v['prompt'] === 'string')
      return [{ role: 'user', content: (v['input'] ?? v['prompt']) as string }];
  }
  return raw === undefined || raw === null ? [] : [{ role: 'user', content: toText(raw) }];
}

/** output.value: a chat completion (choices), a message, a Responses `output` list, or text. */
export function valueOutput(ctx: SpanCtx): Msgs {
  const raw = ctx.a['output.value'];
  const v = typeof raw === 'string' ? parseLoose(raw) : raw;
  if (isObj(v)) {
    if (Array.isArray(v['choices'])) {
      const out: Msgs = [];
      for (const c of v['choices'])
        if (isObj(c)) normalizeMessage(c['message'] ?? { role: 'assistant', content: c['text'] ?? null }, 'assistant', out);
      if (out.length) return out;
    }
    if (Array.isArray(v['output'])) return normalizeMessages(v['output'], 'assistant');
    if (v['role'] !== undefined && (v['content'] !== undefined || v['parts'] !== undefined)) return normalizeMessages(v, 'assistant');
  }
  return raw === undefined || raw === null ? [] : [{ role: 'assistant', content: toText(raw) }];
}
