// OpenInference (Arize; Phoenix): openinference.span.kind classifies; the flattened
// llm.input_messages.N.* / llm.output_messages.N.* are rebuilt by indexed.ts; the raw
// input.value / output.value payloads (a chat request or completion, an OpenAI Responses request
// or response, or plain text) are read here, after every structured source.
import type { NormalizedMessage, SpanClass } from '../../../executions/span.ts';
import { isObj, parseLoose, toText, type SpanCtx } from '../context.ts';
import { normalizeMessage, normalizeMessages } from '../normalize.ts';

type Msgs = NormalizedMessage[];

export const OPENINFERENCE_KINDS: Record<string, SpanClass> = {
  LLM: 'inference',
  EMBEDDING: 'inference',
  TOOL: 'tool',
  AGENT: 'agent',
  CHAIN: 'agent',
  RETRIEVER: 'other',
  RERANKER: 'other',
  GUARDRAIL: 'other',
  EVALUATOR: 'other',
  PROMPT: 'other',
};

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
