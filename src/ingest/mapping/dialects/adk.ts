// Google ADK (`gcp.vertex.agent`): its llm_response attribute holds Gemini's usage_metadata, whose
// cached_content_token_count no gen_ai.usage key carries. Gemini's prompt_token_count includes the
// cached tokens; candidates_token_count excludes thoughts (thoughts_token_count).
import { isObj, type SpanCtx } from '../context.ts';
import { jsonParts, type UsageParts } from '../usage.ts';

const RESPONSE = 'gcp.vertex.agent.llm_response';

export function adkUsageParts(ctx: SpanCtx): UsageParts {
  const res = ctx.structured(RESPONSE);
  const md = isObj(res) ? (res['usage_metadata'] ?? res['usageMetadata']) : undefined;
  const out = jsonParts(md, RESPONSE, 'usage_metadata.', {
    input: 'prompt_token_count',
    output: 'candidates_token_count',
    cacheRead: 'cached_content_token_count',
    reasoning: 'thoughts_token_count',
    total: 'total_token_count',
  });
  if (out.reasoning) out.reasoningOutside = `Gemini's candidates_token_count excludes thoughts: ${out.reasoning.key} added`;
  return out;
}
