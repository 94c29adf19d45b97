// What a judge prompt sees of the thing it judges (docs/evaluators.md, "Variables"): the input,
// the output, the expected output and the metadata, whatever the target. For an execution: the
// conversation before its final assistant message (as a transcript, one "role: content" line per
// message), that message's content, metadata's `expected_output` if it has one, and its metadata.
// A dataset run target's judged execution takes its expected output from the run's dataset item.
import crypto from 'node:crypto';
import type { VariableSource } from './evaluator.ts';

export interface JudgedItem {
  input: string;
  output: string;
  expected_output: string;
  metadata: Record<string, string>;
}

type Message = { role?: unknown; content?: unknown };

/** A value as a judge prompt shows it: text as is, anything else as JSON, nothing as ''. */
export const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : content === null || content === undefined ? '' : JSON.stringify(content);

export function itemOfExecution(execution: { conversation_history?: unknown[]; metadata: Record<string, string> }): JudgedItem {
  const messages = (execution.conversation_history ?? []) as Message[];
  const last = messages[messages.length - 1];
  const answered = last?.role === 'assistant';
  const before = answered ? messages.slice(0, -1) : messages;
  return {
    input: before.map((m) => `${String(m.role ?? '')}: ${textOf(m.content)}`).join('\n'),
    output: answered ? textOf(last.content) : '',
    expected_output: execution.metadata.expected_output ?? '',
    metadata: execution.metadata,
  };
}

/** The judge prompt's inputs: each variable from its source; template variables named like a source need no mapping. */
export function judgeInputs(item: JudgedItem, variables: Record<string, VariableSource>): Record<string, unknown> {
  const valueOf = (source: VariableSource): unknown =>
    source.startsWith('metadata.') ? (item.metadata[source.slice('metadata.'.length)] ?? '') : item[source as keyof JudgedItem];
  const inputs: Record<string, unknown> = { ...item };
  for (const [name, source] of Object.entries(variables)) inputs[name] = valueOf(source);
  return inputs;
}

/** Whether the evaluator samples this trace: a hash of (evaluator, trace), so the same trace is always in or out. */
export function sampled(evaluatorId: string, traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const h = crypto.createHash('sha256').update(`${evaluatorId}:${traceId}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < rate;
}

/** Judge executions' trace ids (and their scores' ids) start so: the scan never judges a judge. */
export const JUDGE_TRACE_PREFIX = 'tl-judge-';

/** The judge call's trace id, which is also its score's id: one per (evaluator, execution). */
export function judgeTraceId(evaluatorId: string, traceId: string): string {
  return `${JUDGE_TRACE_PREFIX}${crypto.createHash('sha256').update(`${evaluatorId}\u0000${traceId}`).digest('hex').slice(0, 32)}`;
}
