// Pydantic AI agent spans (instrumentation v2's `agent run`, also later versions' invoke_agent):
// the whole conversation in pydantic_ai.all_messages (OTel GenAI role + parts messages) and the
// agent's answer in final_result. The system instructions, when sent apart
// (gen_ai.system_instructions), come first as a system message.
import type { NormalizedMessage } from '../../../executions/span.ts';
import { toText, type SpanCtx } from '../context.ts';
import { normalizeMessages, partsText } from '../normalize.ts';

export const PYDANTIC_MESSAGES = 'pydantic_ai.all_messages';
export const PYDANTIC_RESULT = 'final_result';
const SYSTEM = 'gen_ai.system_instructions';

export function pydanticInput(ctx: SpanCtx): { messages: NormalizedMessage[]; from: string } {
  const out: NormalizedMessage[] = [];
  let from = PYDANTIC_MESSAGES;
  const all = normalizeMessages(ctx.structured(PYDANTIC_MESSAGES), 'user');
  if (ctx.has(SYSTEM) && all[0]?.role !== 'system') {
    const text = partsText(ctx.structured(SYSTEM));
    if (text !== null) {
      out.push({ role: 'system', content: text });
      from = `${SYSTEM} + ${PYDANTIC_MESSAGES}`;
    }
  }
  out.push(...all);
  return { messages: out, from };
}

export function pydanticOutput(ctx: SpanCtx): NormalizedMessage[] {
  const v = ctx.structured(PYDANTIC_RESULT);
  if (v === undefined || v === null) return [];
  return [{ role: 'assistant', content: toText(v) }];
}
