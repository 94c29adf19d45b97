// Flue (`@flue/opentelemetry`): model turns ride OTel GenAI keys (operation chat, model,
// provider, usage) but carry their conversation in flue.turn.input ({systemPrompt, messages,
// tools}) and flue.turn.output (one assistant message); tool, task (sub-agent), workflow and
// operation spans are pure flue.*. Messages: user / assistant (text, thinking, toolCall{id, name,
// arguments}) / toolResult{toolCallId, toolName, content, isError}, normalised in normalize.ts.
import type { NormalizedMessage, SpanClass } from '../../../executions/span.ts';
import { asStr, isObj, type SpanCtx } from '../context.ts';
import { normalizeMessages } from '../normalize.ts';

const CLASSES: Array<[string, SpanClass]> = [
  ['flue.tool.name', 'tool'],
  ['flue.tool.call_id', 'tool'],
  ['flue.task.id', 'agent'],
  ['flue.workflow.name', 'agent'],
  ['flue.operation.id', 'other'],
];

export function flueClass(ctx: SpanCtx): [SpanClass, string] | undefined {
  for (const [key, cls] of CLASSES) if (ctx.a[key] !== undefined) return [cls, key];
  return undefined;
}

export const FLUE_IN = 'flue.turn.input';
export const FLUE_OUT = 'flue.turn.output';

export function flueMessages(ctx: SpanCtx, side: 'input' | 'output'): NormalizedMessage[] {
  if (side === 'output') return normalizeMessages(ctx.structured(FLUE_OUT), 'assistant');
  const input = ctx.structured(FLUE_IN);
  const out: NormalizedMessage[] = [];
  if (!isObj(input)) return normalizeMessages(input, 'user', out);
  const system = asStr(input['systemPrompt']);
  if (system) out.push({ role: 'system', content: input['systemPrompt'] as string });
  return normalizeMessages(input['messages'], 'user', out);
}
