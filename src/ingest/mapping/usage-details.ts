// The usage types beyond the four totals (docs/otel-mapping.md, "Usage types"), and what price
// conditions are matched against (service tier, region, batch). Every detail count is a PART of a
// total the span already counts, whatever the dialect, so nothing is counted twice:
//   cache_write_1h          ⊂ cache write   (Anthropic cache_creation.ephemeral_1h_input_tokens)
//   input_audio, input_image ⊂ input, outside the cache (OpenAI prompt_tokens_details.audio_tokens,
//                              Gemini prompt_tokens_details by modality)
//   output_audio, output_image ⊂ output   (OpenAI completion_tokens_details, Gemini candidates)
//   web_search              calls, outside every token count (Anthropic server_tool_use)
// Langfuse's own usage types are disjoint: its dialect adds input_audio & co. to input first
// (langfuse.ts), so the same count is a part there too. Read only for inference spans with usage.
import type { DetailType, PricingContext, UsageDetails } from '../../pricing/cost.ts';
import { asCount, isObj, type SpanCtx } from './context.ts';

const ATTRIBUTES: Array<[DetailType, string[]]> = [
  ['cache_write_1h', ['gen_ai.usage.cache_write_1h.input_tokens', 'gen_ai.usage.cache_creation.ephemeral_1h_input_tokens']],
  ['input_audio', ['gen_ai.usage.audio.input_tokens', 'llm.token_count.prompt_details.audio']],
  ['input_image', ['gen_ai.usage.image.input_tokens', 'llm.token_count.prompt_details.image']],
  ['output_audio', ['gen_ai.usage.audio.output_tokens', 'llm.token_count.completion_details.audio']],
  ['output_image', ['gen_ai.usage.image.output_tokens', 'llm.token_count.completion_details.image']],
  ['web_search', ['gen_ai.usage.web_search.requests', 'gen_ai.usage.server_tool_use.web_search_requests']],
];

/** Langfuse usage_details names of each detail (its OpenAI integration flattens *_tokens_details as input_/output_ + name). */
export const LANGFUSE_DETAILS: Array<[DetailType, string[]]> = [
  ['cache_write_1h', ['input_cache_creation_1h']],
  ['input_audio', ['input_audio', 'input_audio_tokens']],
  ['input_image', ['input_image', 'input_image_tokens']],
  ['output_audio', ['output_audio', 'output_audio_tokens']],
  ['output_image', ['output_image', 'output_image_tokens']],
  ['web_search', ['web_search_requests', 'web_search']],
];

const LF_USAGE = 'langfuse.observation.usage_details';
const AI_SDK_METADATA = 'ai.response.providerMetadata';
const ADK_RESPONSE = 'gcp.vertex.agent.llm_response';

const SERVICE_TIER = [
  'gen_ai.openai.response.service_tier',
  'openai.response.service_tier',
  'gen_ai.response.service_tier',
  'gen_ai.openai.request.service_tier',
  'gen_ai.request.service_tier',
];
const REGION = ['cloud.region', 'aws.region', 'gcp.region'];
const BATCH = 'traceloom.pricing.batch';

/** Gemini's per-modality counts ([{modality: "AUDIO", token_count: n}]) into `into`. */
function modalities(list: unknown, side: 'input' | 'output', into: UsageDetails, used: string[], path: string, sign = 1): void {
  if (!Array.isArray(list)) return;
  for (const m of list) {
    if (!isObj(m)) continue;
    const modality = String(m['modality'] ?? '').toUpperCase();
    const n = asCount(m['token_count'] ?? m['tokenCount']);
    if (n === undefined || n === 0) continue;
    const type = modality === 'AUDIO' ? `${side}_audio` : modality === 'IMAGE' ? `${side}_image` : undefined;
    if (!type) continue;
    into[type as DetailType] = Math.max(0, (into[type as DetailType] ?? 0) + sign * n);
    used.push(`${ADK_RESPONSE} (${path})`);
  }
}

export function mapUsageDetails(ctx: SpanCtx): UsageDetails | undefined {
  const out: UsageDetails = {};
  const used: string[] = [];
  const set = (type: DetailType, v: unknown, source: string) => {
    if (out[type] !== undefined) return;
    const n = asCount(v);
    if (n === undefined || n === 0) return;
    out[type] = n;
    used.push(source);
  };
  for (const [type, keys] of ATTRIBUTES) for (const key of keys) if (ctx.a[key] !== undefined) set(type, ctx.a[key], key);
  if (ctx.a[LF_USAGE] !== undefined) {
    const d = ctx.structured(LF_USAGE);
    if (isObj(d))
      for (const [type, names] of LANGFUSE_DETAILS) for (const n of names) if (d[n] !== undefined) set(type, d[n], `${LF_USAGE}.${n}`);
  }
  if (ctx.a[AI_SDK_METADATA] !== undefined) {
    const md = ctx.structured(AI_SDK_METADATA);
    const anthropic = isObj(md) ? md['anthropic'] : undefined;
    const u = isObj(anthropic) ? anthropic['usage'] : undefined;
    if (isObj(u)) {
      const cc = u['cache_creation'];
      if (isObj(cc))
        set(
          'cache_write_1h',
          cc['ephemeral_1h_input_tokens'],
          `${AI_SDK_METADATA} (anthropic.usage.cache_creation.ephemeral_1h_input_tokens)`,
        );
      const st = u['server_tool_use'];
      if (isObj(st))
        set('web_search', st['web_search_requests'], `${AI_SDK_METADATA} (anthropic.usage.server_tool_use.web_search_requests)`);
    }
  }
  if (ctx.a[ADK_RESPONSE] !== undefined) {
    const res = ctx.structured(ADK_RESPONSE);
    const md = isObj(res) ? (res['usage_metadata'] ?? res['usageMetadata']) : undefined;
    if (isObj(md)) {
      const found: UsageDetails = {};
      const input = md['prompt_tokens_details'] ?? md['promptTokensDetails'];
      const cached = md['cache_tokens_details'] ?? md['cacheTokensDetails'];
      const output = md['candidates_tokens_details'] ?? md['candidatesTokensDetails'];
      modalities(input, 'input', found, used, 'usage_metadata.prompt_tokens_details');
      // Gemini's prompt modalities include the cached tokens (cache_tokens_details): those are cache reads, not input audio/image.
      modalities(cached, 'input', found, used, 'usage_metadata.cache_tokens_details', -1);
      modalities(output, 'output', found, used, 'usage_metadata.candidates_tokens_details');
      for (const [k, v] of Object.entries(found) as Array<[DetailType, number]>) if (v > 0) out[k] ??= v;
    }
  }
  if (used.length === 0) return undefined;
  ctx.map('usage.details', used.join(', '));
  return out;
}

/** What price conditions are matched against: the response's service tier before the request's. */
export function mapPricingContext(ctx: SpanCtx): PricingContext | undefined {
  const out: PricingContext = {};
  const used: string[] = [];
  for (const key of SERVICE_TIER) {
    const v = ctx.a[key];
    if (typeof v === 'string' && v && v.length <= 32) {
      out.service_tier = v.toLowerCase();
      used.push(key);
      break;
    }
  }
  for (const key of REGION) {
    const v = ctx.a[key] ?? ctx.span.resource?.[key];
    if (typeof v === 'string' && v && v.length <= 64) {
      out.region = v.toLowerCase();
      used.push(key);
      break;
    }
  }
  const batch = ctx.a[BATCH];
  if (batch === true || batch === 'true') {
    out.batch = true;
    used.push(BATCH);
  } else if (out.service_tier === 'batch') out.batch = true;
  if (used.length === 0) return undefined;
  ctx.map('pricing.context', used.join(', '));
  return out;
}
