// OTel GenAI semantic conventions: what each gen_ai.operation.name makes a span. Their usage keys
// are in keys.ts (with every dialect's spellings, in precedence order), their message sources
// (gen_ai.input.messages / output.messages / system_instructions, the details and per-message
// events) in messages.ts.
import type { SpanClass } from '../../../executions/span.ts';

export const GENAI_OPS: Record<string, SpanClass> = {
  chat: 'inference',
  text_completion: 'inference',
  generate_content: 'inference',
  completion: 'inference',
  generate: 'inference',
  embeddings: 'inference',
  execute_tool: 'tool',
  tool_call: 'tool',
  invoke_agent: 'agent',
  create_agent: 'agent',
  invoke_workflow: 'agent',
  // Named, never counted: steps and cycles repeat their children's usage (AI SDK v7 agent_step,
  // Strands execute_event_loop_cycle); fetch_response MUST NOT report usage; retrieval and
  // memory operations are not model calls.
  agent_step: 'other',
  execute_event_loop_cycle: 'other',
  fetch_response: 'other',
  retrieval: 'other',
  plan: 'other',
  framework: 'other',
  create_memory_store: 'other',
  delete_memory_store: 'other',
  create_memory: 'other',
  update_memory: 'other',
  upsert_memory: 'other',
  search_memory: 'other',
  delete_memory: 'other',
};
