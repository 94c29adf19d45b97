// A call to a model connection recorded as an execution, as the playground and experiments record
// theirs (docs/playground.md, docs/datasets.md): the tokens and latency the model reported, priced
// from the price table by the recorder; a call that failed is a failed execution with its error,
// no tokens and no cost. Linked to the prompt version it rendered, with its variables.
import type { ExecutionRecorder } from '../executions/record.ts';
import type { ExecutionSource } from '../executions/row.ts';
import type { ChatMessage } from '../prompts/template.ts';
import type { JudgeAnswer } from './judge-client.ts';

export interface ModelCall {
  traceId: string;
  agentId: string;
  connection: { provider: string; model: string };
  answer: JudgeAnswer;
  started: Date;
  messages: ChatMessage[];
  tags: string[];
  metadata: Record<string, string>;
  version?: { prompt_id: string; version: number; inputs: Record<string, unknown> };
  apiKeyId: string;
  source: ExecutionSource;
}

export async function recordModelCall(recorder: ExecutionRecorder, projectId: string, c: ModelCall) {
  const { answer } = c;
  return recorder.record(
    projectId,
    {
      trace_id: c.traceId,
      agent_id: c.agentId,
      provider: c.connection.provider,
      model: answer.ok ? answer.model : c.connection.model,
      tokens_in: answer.ok ? answer.usage.tokensIn : 0,
      tokens_out: answer.ok ? answer.usage.tokensOut : 0,
      tokens_cached_in: answer.ok ? answer.usage.cachedIn : 0,
      tokens_reasoning: answer.ok ? answer.usage.reasoning : 0,
      latency_ms: answer.ok ? answer.latencyMs : Date.now() - c.started.getTime(),
      started_at: c.started.toISOString(),
      status: answer.ok ? 'ok' : 'error',
      ...(answer.ok ? {} : { error_message: answer.error }),
      tags: c.tags,
      metadata: c.metadata,
      conversation_history: [...c.messages, ...(answer.ok ? [{ role: 'assistant', content: answer.content }] : [])],
      ...(c.version ? { template_usages: [{ prompt_id: c.version.prompt_id, version: c.version.version, inputs: c.version.inputs }] } : {}),
    },
    c.apiKeyId,
    c.source,
  );
}
