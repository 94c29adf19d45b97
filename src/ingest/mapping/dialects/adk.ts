// Google ADK (`gcp.vertex.agent`): vendor JSON messages in gcp.vertex.agent.llm_request
// ({model, config:{system_instruction}, contents}) and llm_response ({content, usage_metadata});
// the usage_metadata's cached_content_token_count is carried by no gen_ai.usage key. Gemini's prompt_token_count includes the
// cached tokens; candidates_token_count excludes thoughts (thoughts_token_count).
import type { NormalizedMessage } from '../../../executions/span.ts';
import { isObj, type SpanCtx } from '../context.ts';
import { normalizeMessages, partsText } from '../normalize.ts';
import { jsonParts, type UsageParts } from '../usage.ts';

const REQUEST = 'gcp.vertex.agent.llm_request';
const RESPONSE = 'gcp.vertex.agent.llm_response';

/** The request's system instruction, then its contents (Gemini Content: role user/model, parts). */
export function adkRequest(ctx: SpanCtx): NormalizedMessage[] {
  const req = ctx.structured(REQUEST);
  if (!isObj(req)) return [];
  const out: NormalizedMessage[] = [];
  const config = req['config'];
  if (isObj(config) && config['system_instruction'] !== undefined) {
    const text = partsText(config['system_instruction']);
    if (text !== null) out.push({ role: 'system', content: text });
  }
  return normalizeMessages(req['contents'], 'user', out);
}

export function adkResponse(ctx: SpanCtx): NormalizedMessage[] {
  const res = ctx.structured(RESPONSE);
  return isObj(res) && res['content'] !== undefined ? normalizeMessages(res['content'], 'assistant') : [];
}

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
