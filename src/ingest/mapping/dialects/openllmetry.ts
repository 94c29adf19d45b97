// OpenLLMetry / Traceloop: framework spans named by traceloop.span.kind (a model call is named by
// llm.request.type, read in classify.ts). The flattened gen_ai.prompt.N.* / gen_ai.completion.N.*
// messages are rebuilt by indexed.ts; traceloop.entity.{name,input,output} are a tool's or an
// agent's name and payloads (fields.ts).
import type { SpanClass } from '../../../executions/span.ts';

export const TRACELOOP_KINDS: Record<string, SpanClass> = {
  agent: 'agent',
  workflow: 'agent',
  tool: 'tool',
  task: 'other',
  session: 'other',
};
