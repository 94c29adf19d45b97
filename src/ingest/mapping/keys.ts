// Every attribute key the mapper reads, by purpose, in precedence order where order matters.
// The single pass over a span's keys (indexed.ts) marks which groups are present, so a span
// without, say, any usage key never pays for the ~40 usage lookups; most spans of a trace are
// not GenAI spans at all and skip nearly everything.

export const G = {
  CLASS: 1,
  MODEL: 2,
  PROVIDER: 4,
  USAGE: 8,
  COST: 16,
  AGENT: 32,
  SESSION: 64,
  PROMPT: 128,
  MESSAGES: 256,
  /** user, tags, metadata (trace-attributes.ts) */
  TRACE: 512,
  // Dialects whose keys are read by their own file under dialects/: a bit says the span carries
  // one of their keys, so a span without any never pays for their lookups.
  LANGFUSE: 1024,
  GENKIT: 2048,
  FLUE: 4096,
  PYDANTIC: 8192,
  ADK: 16384,
  VERCEL_METADATA: 32768,
  /** traceloom.dataset.* (dataset-links.ts) */
  DATASET: 65536,
} as const;

export const CLASS_KEYS = [
  'gen_ai.operation.name',
  'openinference.span.kind',
  'spring.ai.kind',
  'ai.operationId',
  'operation.name',
  'traceloop.span.kind',
  'llm.request.type',
  'langsmith.span.kind',
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
];

/** Model keys, best first (docs/otel-mapping.md, "Fields"; gen_ai.model.id, a key of the flat JSON form, last). */
export const MODEL_KEYS = [
  'langfuse.observation.model.name',
  'gen_ai.response.model',
  'gen_ai.request.model',
  'llm.response.model_name',
  'llm.model_name',
  'llm.request.model_name',
  'ai.response.model',
  'ai.model.id',
  'embedding.model_name',
  'gen_ai.model.id',
];

export const PROVIDER_KEYS = ['gen_ai.provider.name', 'gen_ai.system', 'llm.provider', 'llm.system', 'ai.model.provider'];

export const USAGE_IN = [
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.prompt_tokens',
  'llm.token_count.prompt',
  'ai.usage.inputTokens',
  'ai.usage.promptTokens',
  'llm.usage.prompt_tokens',
  'ai.usage.tokens',
];
export const USAGE_OUT = [
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.completion_tokens',
  'llm.token_count.completion',
  'ai.usage.outputTokens',
  'ai.usage.completionTokens',
  'llm.usage.completion_tokens',
];
export const USAGE_CACHE_READ = [
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_read_input_tokens',
  'gen_ai.usage.input_cached_tokens',
  'llm.token_count.prompt_details.cache_read',
  'ai.usage.inputTokenDetails.cacheReadTokens',
  'ai.usage.cachedInputTokens',
];
export const USAGE_CACHE_WRITE = [
  'gen_ai.usage.cache_write.input_tokens',
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.cache_creation_input_tokens',
  'gen_ai.usage.cache_write_input_tokens',
  'llm.token_count.prompt_details.cache_write',
  'ai.usage.inputTokenDetails.cacheWriteTokens',
];
export const USAGE_REASONING = [
  'gen_ai.usage.reasoning.output_tokens',
  'gen_ai.usage.reasoning_tokens',
  'llm.token_count.completion_details.reasoning',
  'ai.usage.reasoningTokens',
  'ai.usage.outputTokenDetails.reasoningTokens',
  'gen_ai.usage.experimental.reasoning_tokens',
];
export const USAGE_TOTAL = ['gen_ai.usage.total_tokens', 'llm.token_count.total', 'ai.usage.totalTokens', 'llm.usage.total_tokens'];
export const USAGE_NO_CACHE = 'ai.usage.inputTokenDetails.noCacheTokens';

export const COST_KEYS = ['gen_ai.usage.cost', 'llm.cost.total', 'operation.cost'];

/** traceloop.entity.name names an agent only on a traceloop.span.kind=agent span; Pydantic AI v2's agent_name last. */
export const AGENT_KEYS = ['gen_ai.agent.id', 'gen_ai.agent.name', 'agent.name', 'ai.telemetry.functionId', 'agent_name'];
export const AGENT_KEYS_TRACELOOP = [
  'gen_ai.agent.id',
  'gen_ai.agent.name',
  'agent.name',
  'traceloop.entity.name',
  'ai.telemetry.functionId',
  'agent_name',
];

export const SESSION_KEYS = [
  'gen_ai.conversation.id',
  'session.id',
  'langfuse.session.id',
  'ai.telemetry.metadata.sessionId',
  'traceloop.association.properties.session_id',
  'spring.ai.chat.client.conversation.id',
  'gcp.vertex.agent.session_id',
  'genkit:sessionId',
];

export const USER_KEYS = [
  'user.id',
  'langfuse.user.id',
  'ai.telemetry.metadata.userId',
  'traceloop.association.properties.user_id',
  'enduser.id',
];
export const TAG_KEYS = ['tag.tags', 'langfuse.trace.tags', 'ai.telemetry.metadata.tags'];
export const METADATA_OBJECT_KEYS = ['metadata', 'langfuse.trace.metadata', 'langfuse.observation.metadata'];
/** Families of `<prefix><key>` metadata, gathered by the attribute scan (indexed.ts). */
export const METADATA_PREFIXES = [
  'langfuse.trace.metadata.',
  'traceloop.association.properties.',
  'ai.telemetry.metadata.',
  'langfuse.observation.metadata.',
];

export const TOOL_NAME_KEYS = [
  'gen_ai.tool.name',
  'tool.name',
  'ai.toolCall.name',
  'spring.ai.tool.definition.name',
  'flue.tool.name',
  'genkit:name',
];
export const TOOL_ID_KEYS = ['gen_ai.tool.call.id', 'ai.toolCall.id', 'tool_call.id', 'tool.id', 'flue.tool.call_id'];
export const TOOL_ARG_KEYS = [
  'langfuse.observation.input',
  'gen_ai.tool.call.arguments',
  'ai.toolCall.args',
  'ai.toolCall.input',
  'spring.ai.tool.call.arguments',
  'tool_arguments',
  'gcp.vertex.agent.tool_call_args',
  'flue.tool.arguments',
  'genkit:input',
  'input.value',
];
export const TOOL_RESULT_KEYS = [
  'langfuse.observation.output',
  'gen_ai.tool.call.result',
  'ai.toolCall.result',
  'ai.toolCall.output',
  'spring.ai.tool.call.result',
  'tool_response',
  'gcp.vertex.agent.tool_response',
  'flue.tool.result',
  'genkit:output',
  'output.value',
];

export const PROMPT_KEYS = [
  'traceloom.prompt.id',
  'traceloom.prompt.version',
  'traceloom.prompt.inputs',
  'gen_ai.prompt.name',
  'gen_ai.prompt.version',
  'langfuse.observation.prompt.name',
  'langfuse.observation.prompt.version',
  'llm.prompt_template.template',
  'llm.prompt_template.version',
  'llm.prompt_template.variables',
];

/** A dataset run's link to the item this trace ran (dataset-links.ts; docs/datasets.md). */
export const DATASET_RUN_KEY = 'traceloom.dataset.run_id';
export const DATASET_ITEM_KEY = 'traceloom.dataset.item_id';

/** Message sources read by exact key (the indexed families are found by prefix in the scan). */
export const MESSAGE_KEYS = [
  'gen_ai.system_instructions',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.prompt',
  'gen_ai.completion',
  'ai.prompt.messages',
  'ai.prompt',
  'ai.response.text',
  'ai.response.toolCalls',
  'ai.response.object',
  'ai.result.text',
  'ai.result.toolCalls',
  'ai.result.object',
  'gcp.vertex.agent.llm_request',
  'gcp.vertex.agent.llm_response',
  'input.value',
  'output.value',
];

/** Dialect keys (dialects/*.ts): key → the purpose groups it serves beside its dialect's bit. */
const DIALECT_KEYS: Array<[number, Array<[string, number]>]> = [
  [
    G.LANGFUSE,
    [
      ['langfuse.observation.type', G.CLASS],
      ['langfuse.observation.usage_details', G.USAGE],
      ['langfuse.observation.cost_details', G.COST],
      ['langfuse.observation.input', G.MESSAGES],
      ['langfuse.observation.output', G.MESSAGES],
    ],
  ],
  [
    G.GENKIT,
    [
      ['genkit:type', G.CLASS],
      ['genkit:metadata:subtype', G.CLASS],
      ['genkit:name', G.MODEL],
      ['genkit:input', G.MESSAGES],
      ['genkit:output', G.MESSAGES | G.USAGE],
    ],
  ],
  [
    G.FLUE,
    [
      ['flue.tool.name', G.CLASS],
      ['flue.tool.call_id', G.CLASS],
      ['flue.task.id', G.CLASS],
      ['flue.workflow.name', G.CLASS],
      ['flue.operation.id', G.CLASS],
      ['flue.turn.input', G.MESSAGES],
      ['flue.turn.output', G.MESSAGES],
    ],
  ],
  [
    G.PYDANTIC,
    [
      ['pydantic_ai.all_messages', G.MESSAGES],
      ['final_result', G.MESSAGES],
    ],
  ],
  [G.ADK, [['gcp.vertex.agent.llm_response', G.MESSAGES | G.USAGE]]],
  [G.VERCEL_METADATA, [['ai.response.providerMetadata', G.USAGE]]],
];

/** key → the groups it belongs to */
export const KEY_GROUPS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>();
  const add = (keys: readonly string[], g: number): void => {
    for (const k of keys) m.set(k, (m.get(k) ?? 0) | g);
  };
  add(CLASS_KEYS, G.CLASS);
  add(MODEL_KEYS, G.MODEL);
  add([...PROVIDER_KEYS, 'server.address'], G.PROVIDER);
  add([...USAGE_IN, ...USAGE_OUT, ...USAGE_CACHE_READ, ...USAGE_CACHE_WRITE, ...USAGE_REASONING, ...USAGE_TOTAL, USAGE_NO_CACHE], G.USAGE);
  add(COST_KEYS, G.COST);
  add(AGENT_KEYS_TRACELOOP, G.AGENT);
  add(SESSION_KEYS, G.SESSION);
  add(PROMPT_KEYS, G.PROMPT);
  add(MESSAGE_KEYS, G.MESSAGES);
  add([DATASET_RUN_KEY, DATASET_ITEM_KEY], G.DATASET);
  add([...USER_KEYS, ...TAG_KEYS, ...METADATA_OBJECT_KEYS], G.TRACE);
  for (const [dialect, keys] of DIALECT_KEYS) for (const [key, groups] of keys) add([key], dialect | groups);
  return m;
})();
