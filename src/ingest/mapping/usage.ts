// Token usage with OpenTelemetry semantics whatever the dialect: tokensIn includes cached and
// cache-write tokens, tokensOut includes reasoning tokens. Keys per count in the order of the
// reference's precedence table (§2.12), plus the older and SDK-specific spellings after them.
//
// Some senders report input without the cache, or output without reasoning. Where the dialect
// says so, or the numbers prove it, the parts are added back:
//  - cache_read + cache_write > input, or reasoning > output: the larger part cannot be a subset;
//  - a total that equals input + output + the parts (and not input + output) says they were
//    excluded (Bedrock totals, Gemini totals through the AI SDK);
//  - AI SDK v4/v5 with the Anthropic provider: `inputTokens` is Anthropic's uncached input_tokens
//    (v6 reports the total, with inputTokenDetails.noCacheTokens beside it);
//  - gen_ai.usage.experimental.reasoning_tokens (Google ADK): Gemini's candidates count, sent as
//    output_tokens, excludes thoughts.
import type { SpanUsage } from '../../executions/span.ts';
import { asCount, isObj, preview, type SpanCtx } from './context.ts';
import {
  USAGE_CACHE_READ as CACHE_READ,
  USAGE_CACHE_WRITE as CACHE_WRITE,
  USAGE_IN,
  USAGE_NO_CACHE,
  USAGE_OUT,
  USAGE_REASONING as REASONING,
  USAGE_TOTAL as TOTAL,
} from './keys.ts';

const IN = USAGE_IN;
const OUT = USAGE_OUT;
const NO_CACHE = USAGE_NO_CACHE;

interface Count {
  value: number;
  key: string;
}

export interface UsageResult {
  usage: SpanUsage;
  /** the keys the counts came from, for explain and for "not counted" notes */
  keys: string[];
  conversions: string[];
}

// key → [family, rank]: a span's present usage keys are few, so pick among those rather than
// looking up all ~40 spellings.
const FAMILIES = [IN, OUT, CACHE_READ, CACHE_WRITE, REASONING, TOTAL, [NO_CACHE]];
const RANK = new Map<string, [number, number]>();
FAMILIES.forEach((keys, family) => keys.forEach((key, rank) => RANK.set(key, [family, rank])));

/** The best valid count of one family among `present` (keys sorted by rank); the rest noted. */
function pick(ctx: SpanCtx, present: string[] | undefined): Count | undefined {
  if (!present) return undefined;
  if (present.length > 1) present.sort((x, y) => RANK.get(x)![1] - RANK.get(y)![1]);
  let found: Count | undefined;
  for (const key of present) {
    const raw = ctx.a[key];
    if (raw === undefined || raw === null) continue;
    const value = asCount(raw);
    if (value === undefined) {
      ctx.ignore(key, `not a token count: ${preview(raw)}`);
      continue;
    }
    if (!found) found = { value, key };
    else ctx.ignore(key, value === found.value ? `superseded by ${found.key}` : `superseded by ${found.key} (${value})`);
  }
  return found;
}

/** AI SDK v4/v5 put cache and reasoning counts of some providers only in ai.response.providerMetadata. */
function fromProviderMetadata(ctx: SpanCtx): { cacheRead?: number; cacheWrite?: number; reasoning?: number } {
  const md = ctx.structured('ai.response.providerMetadata');
  if (!isObj(md)) return {};
  const out: { cacheRead?: number; cacheWrite?: number; reasoning?: number } = {};
  const openai = md['openai'];
  if (isObj(openai)) {
    out.cacheRead = asCount(openai['cachedPromptTokens']);
    out.reasoning = asCount(openai['reasoningTokens']);
  }
  const anthropic = md['anthropic'];
  if (isObj(anthropic)) {
    out.cacheWrite = asCount(anthropic['cacheCreationInputTokens']);
    const u = anthropic['usage'];
    if (isObj(u)) {
      out.cacheRead = asCount(u['cache_read_input_tokens']);
      out.cacheWrite ??= asCount(u['cache_creation_input_tokens']);
    }
  }
  const bedrock = md['bedrock'];
  if (isObj(bedrock) && isObj(bedrock['usage'])) {
    const u = bedrock['usage'];
    out.cacheRead = asCount(u['cacheReadInputTokens']);
    out.cacheWrite = asCount(u['cacheWriteInputTokens']);
  }
  return out;
}

/** The span's usage, or undefined when it carries no token count at all. */
export function readUsage(ctx: SpanCtx, usageKeys: readonly string[]): UsageResult | undefined {
  const byFamily: Array<string[] | undefined> = [];
  for (const key of usageKeys) {
    const r = RANK.get(key);
    if (r) (byFamily[r[0]] ??= []).push(key);
  }
  const input = pick(ctx, byFamily[0]);
  const output = pick(ctx, byFamily[1]);
  let cacheRead = pick(ctx, byFamily[2]);
  let cacheWrite = pick(ctx, byFamily[3]);
  let reasoning = pick(ctx, byFamily[4]);
  const total = pick(ctx, byFamily[5]);
  const noCache = pick(ctx, byFamily[6]);
  if (!input && !output && !cacheRead && !cacheWrite && !reasoning && !noCache) {
    if (total) ctx.ignore(total.key, 'a total without input and output counts cannot be split');
    return undefined;
  }

  const vercelProvider = typeof ctx.a['ai.model.provider'] === 'string' ? ctx.a['ai.model.provider'].toLowerCase() : '';
  const vercelLegacy =
    vercelProvider !== '' &&
    ctx.a['ai.usage.inputTokenDetails.noCacheTokens'] === undefined &&
    ctx.a['ai.usage.inputTokenDetails.cacheReadTokens'] === undefined;
  if (vercelLegacy && (!cacheRead || !cacheWrite || !reasoning)) {
    const md = fromProviderMetadata(ctx);
    if (!cacheRead && md.cacheRead !== undefined) cacheRead = { value: md.cacheRead, key: 'ai.response.providerMetadata' };
    if (!cacheWrite && md.cacheWrite !== undefined) cacheWrite = { value: md.cacheWrite, key: 'ai.response.providerMetadata' };
    if (!reasoning && md.reasoning !== undefined) reasoning = { value: md.reasoning, key: 'ai.response.providerMetadata' };
  }

  const cr = cacheRead?.value ?? 0;
  const cw = cacheWrite?.value ?? 0;
  const rs = reasoning?.value ?? 0;
  const conversions: string[] = [];
  let tokensIn: number;
  if (input) tokensIn = input.value;
  else if (noCache) {
    tokensIn = noCache.value + cr + cw;
    conversions.push(`input = ${NO_CACHE} + cache read + cache write`);
  } else tokensIn = cr + cw;
  let tokensOut = output?.value ?? 0;

  let inExcludesCache = false;
  let outExcludesReasoning = false;
  if (input && cr + cw > 0) {
    if (cr + cw > input.value) {
      inExcludesCache = true;
      conversions.push(`${input.key} excluded the cache (cache read + write ${cr + cw} > input ${input.value}): added`);
    } else if (vercelLegacy && (vercelProvider.startsWith('anthropic') || vercelProvider.includes('.anthropic'))) {
      inExcludesCache = true;
      conversions.push(`AI SDK v4/v5 Anthropic input excludes the cache: cache read + write added to ${input.key}`);
    }
  }
  if (output && rs > 0) {
    if (rs > output.value) {
      outExcludesReasoning = true;
      conversions.push(`${output.key} excluded reasoning (${rs} > ${output.value}): added`);
    } else if (reasoning?.key === 'gen_ai.usage.experimental.reasoning_tokens') {
      outExcludesReasoning = true;
      conversions.push(`Google ADK output_tokens excludes thoughts: ${reasoning.key} added`);
    }
  }
  if (total && input && output && (cr + cw > 0 || rs > 0) && !inExcludesCache && !outExcludesReasoning) {
    const t = total.value;
    const base = input.value + output.value;
    if (t !== base) {
      if (cr + cw > 0 && rs > 0 && t === base + cr + cw + rs) {
        inExcludesCache = outExcludesReasoning = true;
        conversions.push(`${total.key} = input + output + cache + reasoning: both parts were excluded, added`);
      } else if (cr + cw > 0 && t === base + cr + cw) {
        inExcludesCache = true;
        conversions.push(`${total.key} = input + output + cache: ${input.key} excluded the cache, added`);
      } else if (rs > 0 && t === base + rs) {
        outExcludesReasoning = true;
        conversions.push(`${total.key} = input + output + reasoning: ${output.key} excluded reasoning, added`);
      }
    }
  }
  if (inExcludesCache) tokensIn += cr + cw;
  if (outExcludesReasoning) tokensOut += rs;

  const keys: string[] = [];
  for (const c of [input, output, cacheRead, cacheWrite, reasoning, input ? undefined : noCache])
    if (c && !keys.includes(c.key)) keys.push(c.key);
  return { usage: { tokensIn, tokensOut, cachedIn: cr, cacheWriteIn: cw, reasoning: rs }, keys, conversions };
}
