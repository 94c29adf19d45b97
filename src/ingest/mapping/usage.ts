// Token usage with OpenTelemetry semantics whatever the dialect: tokensIn includes cached and
// cache-write tokens, tokensOut includes reasoning tokens. Keys per count in the order of the
// reference's precedence table (§2.12), plus the older and SDK-specific spellings after them;
// dialects that carry usage inside a JSON value (Langfuse usage_details, Genkit output, ADK
// llm_response, AI SDK providerMetadata) fill the same parts from their own file (dialects/).
//
// Inclusive or exclusive is decided once, here (resolveUsage), from the numbers the span
// carries, never from an SDK's name or version (docs/otel-mapping.md, "Inclusive or exclusive"):
//  1. the provider's own uncached input count (Anthropic usage.input_tokens in the AI SDK's
//     provider metadata): what uncached + cache read + cache write exceeds input by is what input
//     left out (0, the cache, the read or the write);
//  2. a total that equals input + output + some of the parts says those parts were left out
//     (Bedrock: total = input + output + cache read); one that equals input + output, that none was;
//  3. cache read + cache write > input, or reasoning > output: the larger part cannot be a subset;
//  4. otherwise the dialect's own semantics: the parts are subsets (OpenTelemetry, OpenInference,
//     the AI SDK, Genkit, ADK) except Langfuse's usage types, which are disjoint.
// Gemini's candidates count (ADK's output_tokens) excludes thoughts, which its
// gen_ai.usage.experimental.reasoning_tokens key says.
import type { SpanUsage } from '../../executions/span.ts';
import { asCount, isObj, preview, type SpanCtx } from './context.ts';
import {
  USAGE_CACHE_READ as CACHE_READ,
  USAGE_CACHE_WRITE as CACHE_WRITE,
  USAGE_IN as IN,
  USAGE_NO_CACHE as NO_CACHE,
  USAGE_OUT as OUT,
  USAGE_REASONING as REASONING,
  USAGE_TOTAL as TOTAL,
} from './keys.ts';

export interface Count {
  value: number;
  key: string;
}

/** The counts one source gave, before the inclusive/exclusive rule. */
export interface UsageParts {
  input?: Count;
  output?: Count;
  cacheRead?: Count;
  cacheWrite?: Count;
  reasoning?: Count;
  total?: Count;
  /** AI SDK v6 inputTokenDetails.noCacheTokens */
  noCache?: Count;
  /** The provider's own uncached input (Anthropic usage.input_tokens), when the span carries it beside the SDK's count */
  uncached?: Count;
  /** The source's semantics when the numbers cannot tell: true for disjoint usage types (Langfuse) */
  disjoint?: boolean;
  /** Why reasoning is known to be outside output (Gemini's candidates count), when it is */
  reasoningOutside?: string;
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

/** A key that holds a token count (not a total alone, not a JSON value a dialect reads). */
export function isUsageCount(key: string): boolean {
  const r = RANK.get(key);
  return r !== undefined && r[0] !== 5;
}

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

/** The usage counts among the span's usage attribute keys (the families of keys.ts). */
export function attributeParts(ctx: SpanCtx, usageKeys: readonly string[]): UsageParts {
  const byFamily: Array<string[] | undefined> = [];
  for (const key of usageKeys) {
    const r = RANK.get(key);
    if (r) (byFamily[r[0]] ??= []).push(key);
  }
  const parts: UsageParts = {};
  const set = <K extends keyof UsageParts>(k: K, c: UsageParts[K] | undefined) => {
    if (c !== undefined) parts[k] = c;
  };
  set('input', pick(ctx, byFamily[0]));
  set('output', pick(ctx, byFamily[1]));
  set('cacheRead', pick(ctx, byFamily[2]));
  set('cacheWrite', pick(ctx, byFamily[3]));
  set('reasoning', pick(ctx, byFamily[4]));
  set('total', pick(ctx, byFamily[5]));
  set('noCache', pick(ctx, byFamily[6]));
  if (parts.reasoning?.key === 'gen_ai.usage.experimental.reasoning_tokens')
    parts.reasoningOutside = `Google ADK output_tokens excludes thoughts: ${parts.reasoning.key} added`;
  return parts;
}

type CountPart = 'input' | 'output' | 'cacheRead' | 'cacheWrite' | 'reasoning' | 'total' | 'uncached';

/**
 * Usage parts from the fields of a usage object inside a JSON attribute (ADK usage_metadata,
 * Genkit usage), each labelled `<attribute> (<path><field>)` for explain.
 */
export function jsonParts(obj: unknown, attribute: string, path: string, fields: Partial<Record<CountPart, string>>): UsageParts {
  const out: UsageParts = {};
  if (!isObj(obj)) return out;
  for (const [part, field] of Object.entries(fields) as Array<[CountPart, string]>) {
    const value = asCount(obj[field]);
    if (value !== undefined) out[part] = { value, key: `${attribute} (${path}${field})` };
  }
  return out;
}

/** `extra` fills the parts `into` lacks (a dialect's JSON usage beside the attributes). */
export function fillParts(into: UsageParts, extra: UsageParts): void {
  const tookReasoning = into.reasoning === undefined && extra.reasoning !== undefined;
  for (const k of ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning', 'total', 'noCache', 'uncached'] as const)
    if (into[k] === undefined && extra[k] !== undefined) into[k] = extra[k];
  if (tookReasoning) into.reasoningOutside ??= extra.reasoningOutside;
}

type Part = 'cache read' | 'cache write' | 'reasoning';

/** The non-empty subset of `items` whose values sum to `d`, largest subsets first; undefined when none does. */
function subsetSumming(items: Array<[Part, number]>, d: number): Array<[Part, number]> | undefined {
  if (d <= 0 || items.length === 0) return undefined;
  const n = items.length;
  const masks: number[] = [];
  for (let m = (1 << n) - 1; m > 0; m--) masks.push(m);
  const bits = (m: number) => (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1);
  masks.sort((x, y) => bits(y) - bits(x));
  for (const m of masks) {
    let sum = 0;
    for (let i = 0; i < n; i++) if (m & (1 << i)) sum += items[i]![1];
    if (sum === d) return items.filter((_, i) => m & (1 << i));
  }
  return undefined;
}

/** `wholeCache`: the cache parts found outside are all the cache the span reports. */
function totalNote(totalKey: string, inputKey: string, outputKey: string, parts: Part[], wholeCache: boolean): string {
  let cache: string[] = parts.filter((p) => p !== 'reasoning');
  if (cache.length === 1 && wholeCache) cache = ['cache', 'cache'];
  const hasReasoning = parts.includes('reasoning');
  if (cache.length === 2 && hasReasoning) return `${totalKey} = input + output + cache + reasoning: both parts were excluded, added`;
  if (cache.length === 2) return `${totalKey} = input + output + cache: ${inputKey} excluded the cache, added`;
  if (cache.length === 1 && !hasReasoning) return `${totalKey} = input + output + ${cache[0]}: ${inputKey} excluded the ${cache[0]}, added`;
  if (cache.length === 0) return `${totalKey} = input + output + reasoning: ${outputKey} excluded reasoning, added`;
  return `${totalKey} = input + output + ${cache[0]} + reasoning: ${inputKey} excluded the ${cache[0]} and ${outputKey} reasoning, added`;
}

/**
 * The rule, once for every dialect (docs/otel-mapping.md, "Inclusive or exclusive"): undefined
 * when the parts hold no count at all.
 */
export function resolveUsage(ctx: SpanCtx, p: UsageParts): UsageResult | undefined {
  const { input, output, cacheRead, cacheWrite, reasoning, total, noCache, uncached } = p;
  if (!input && !output && !cacheRead && !cacheWrite && !reasoning && !noCache && !uncached) {
    if (total) ctx.ignore(total.key, 'a total without input and output counts cannot be split');
    return undefined;
  }
  const cr = cacheRead?.value ?? 0;
  const cw = cacheWrite?.value ?? 0;
  const rs = reasoning?.value ?? 0;
  const conversions: string[] = [];
  let tokensIn: number;
  let inDecided = true;
  if (input) {
    tokensIn = input.value;
    inDecided = cr + cw === 0;
  } else if (noCache) {
    tokensIn = noCache.value + cr + cw;
    conversions.push(`input = ${noCache.key} + cache read + cache write`);
  } else if (uncached) {
    tokensIn = uncached.value + cr + cw;
    conversions.push(`input = ${uncached.key} + cache read + cache write`);
  } else tokensIn = cr + cw;
  let tokensOut = output?.value ?? 0;
  let usedOwn: Count | undefined;
  let outDecided = !output || rs === 0;

  // 1. the provider's own uncached count: what input lacks of uncached + cache is what it left out
  const own = uncached ?? noCache; // AI SDK v6's noCacheTokens is the same count, from the SDK
  if (input && !inDecided && own) {
    const missing = own.value + cr + cw - input.value;
    const left: Array<[number, string]> = [
      [0, ''],
      [cr + cw, 'the cache'],
      [cr, 'the cache read'],
      [cw, 'the cache write'],
    ];
    const hit = left.find(([n]) => n === missing);
    if (hit) {
      inDecided = true;
      usedOwn = own;
      if (missing > 0) {
        tokensIn += missing;
        conversions.push(
          `${input.key} is ${input.value}, ${own.key} + cache read + cache write is ${own.value + cr + cw}: ${hit[1]} was excluded, added`,
        );
      }
    }
  }
  // 2. a total that adds up only with some parts outside input and output
  if (total && input && output && (!inDecided || !outDecided)) {
    const items: Array<[Part, number]> = [];
    if (!inDecided && cr > 0) items.push(['cache read', cr]);
    if (!inDecided && cw > 0) items.push(['cache write', cw]);
    if (!outDecided && rs > 0) items.push(['reasoning', rs]);
    const d = total.value - input.value - output.value;
    const outside = subsetSumming(items, d);
    if (d === 0 && items.length > 0) {
      // input + output already make the total: the parts are inside them, whatever the source's default
      inDecided = outDecided = true;
    } else if (outside) {
      for (const [part, n] of outside) {
        if (part === 'reasoning') tokensOut += n;
        else tokensIn += n;
      }
      if (outside.some(([part]) => part !== 'reasoning')) inDecided = true;
      if (outside.some(([part]) => part === 'reasoning')) outDecided = true;
      conversions.push(
        totalNote(
          total.key,
          input.key,
          output.key,
          outside.map(([part]) => part),
          outside.filter(([part]) => part !== 'reasoning').length === (cr > 0 ? 1 : 0) + (cw > 0 ? 1 : 0),
        ),
      );
    }
  }
  // 3. a part larger than its whole; a dialect that says reasoning is outside output
  if (input && !inDecided && cr + cw > input.value) {
    inDecided = true;
    tokensIn += cr + cw;
    conversions.push(`${input.key} excluded the cache (cache read + write ${cr + cw} > input ${input.value}): added`);
  }
  if (output && !outDecided && rs > output.value) {
    outDecided = true;
    tokensOut += rs;
    conversions.push(`${output.key} excluded reasoning (${rs} > ${output.value}): added`);
  } else if (output && !outDecided && p.reasoningOutside) {
    outDecided = true;
    tokensOut += rs;
    conversions.push(p.reasoningOutside);
  }
  // 4. the source's own semantics
  if (input && !inDecided && p.disjoint) {
    tokensIn += cr + cw;
    conversions.push(`${input.key} is disjoint from the cache usage types (Langfuse): cache read + write added`);
  }
  if (output && !outDecided && p.disjoint) {
    tokensOut += rs;
    conversions.push(`${output.key} is disjoint from the reasoning usage type (Langfuse): reasoning added`);
  }

  const keys: string[] = [];
  for (const c of [input, output, cacheRead, cacheWrite, reasoning, input ? usedOwn : (noCache ?? uncached)])
    if (c && !keys.includes(c.key)) keys.push(c.key);
  return { usage: { tokensIn, tokensOut, cachedIn: cr, cacheWriteIn: cw, reasoning: rs }, keys, conversions };
}
