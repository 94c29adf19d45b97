// Langfuse's own SDKs (Python v3+, JS v4+ `@langfuse/otel`): `langfuse.observation.*` and
// `langfuse.trace.*`. The observation type decides the class whenever it is present; model,
// usage and cost details are explicit and outrank every other dialect's keys on the same span.
// Langfuse usage types are disjoint (cost = Σ usage[type] × price[type]): `input` excludes
// `input_cached_tokens` / `input_cache_read` / `input_cache_creation`, `output` excludes
// `output_reasoning_tokens` (Python SDK <= 3.3.0 generations sent as "span" are read as
// generations, as Langfuse does). OpenAI-style names inside usage_details (prompt_tokens, ...) keep
// their own, inclusive, meaning; the numbers (a total) decide over both (usage.ts).
import type { NormalizedMessage, SpanClass } from '../../../executions/span.ts';
import { numberToDecimal, fromScaled, toScaled } from '../../../decimal.ts';
import { asCount, asStr, isObj, preview, toText, type SpanCtx } from '../context.ts';
import { normalizeMessages } from '../normalize.ts';
import type { Count, UsageParts } from '../usage.ts';
import { LANGFUSE_DETAILS } from '../usage-details.ts';

export const LF_TYPE = 'langfuse.observation.type';
export const LF_USAGE = 'langfuse.observation.usage_details';
export const LF_COST = 'langfuse.observation.cost_details';
export const LF_INPUT = 'langfuse.observation.input';
export const LF_OUTPUT = 'langfuse.observation.output';

const TYPES: Record<string, SpanClass> = {
  generation: 'inference',
  embedding: 'inference',
  agent: 'agent',
  chain: 'agent', // like OpenInference CHAIN: a wrapper whose usage, if any, repeats its children's
  tool: 'tool',
  retriever: 'other',
  evaluator: 'other',
  guardrail: 'other',
  span: 'other',
  event: 'other',
};

/** [class, what explain says, the operation] langfuse.observation.type gives; undefined when absent or unknown (noted). */
export function langfuseClass(ctx: SpanCtx): [SpanClass, string, string] | undefined {
  const raw = asStr(ctx.a[LF_TYPE]);
  if (raw === undefined) return undefined;
  const type = raw.toLowerCase();
  if (type === 'span' && generationSentAsSpan(ctx)) return ['inference', 'span, a generation from Python SDK <= 3.3.0', 'generation'];
  const cls = TYPES[type];
  if (cls === undefined) {
    ctx.ignore(LF_TYPE, `unknown observation type ${preview(raw)}`);
    return undefined;
  }
  return [cls, type, type];
}

/** Keys only a generation carries: beside type "span" they mean the Python SDK bug below. */
const GENERATION_KEYS = ['langfuse.observation.model.name', LF_USAGE, LF_COST, 'langfuse.observation.completion_start_time'];

/**
 * Langfuse Python SDK up to 3.3.0 sent type "span" for generations (langfuse/langfuse#8682);
 * Langfuse's server reads them as generations, so do we: scope langfuse-sdk, a Python resource,
 * a version up to 3.3.0 (patch included), and a key only a generation carries.
 */
function generationSentAsSpan(ctx: SpanCtx): boolean {
  const span = ctx.span;
  if (span.scopeName !== 'langfuse-sdk' || span.resource?.['telemetry.sdk.language'] !== 'python') return false;
  const [major = NaN, minor = 0, patch = 0] = String(span.scopeVersion ?? '')
    .split('.')
    .map((n) => parseInt(n, 10));
  if (!(major < 3 || (major === 3 && (minor < 3 || (minor === 3 && patch <= 0))))) return false;
  return GENERATION_KEYS.some((k) => ctx.a[k] !== undefined);
}

const INPUT = ['input', 'prompt_tokens', 'input_tokens', 'promptTokens'];
const OUTPUT = ['output', 'completion_tokens', 'output_tokens', 'completionTokens'];
const TOTAL = ['total', 'total_tokens', 'totalTokens'];
const CACHE_READ = ['input_cached_tokens', 'input_cache_read', 'cache_read_input_tokens', 'cached_tokens'];
const CACHE_WRITE = ['input_cache_creation', 'input_cache_write', 'cache_creation_input_tokens'];
const CACHE_WRITE_TTL = ['input_cache_creation_5m', 'input_cache_creation_1h'];
const REASONING = ['output_reasoning_tokens', 'output_reasoning', 'reasoning_tokens'];
/** Usage types priced at their own rate (usage-details.ts), each a part of input or output. */
const DETAIL_NAMES = new Map(LANGFUSE_DETAILS.flatMap(([type, names]) => names.map((n) => [n, type] as const)));
const KNOWN = new Set([...INPUT, ...OUTPUT, ...TOTAL, ...CACHE_READ, ...CACHE_WRITE, ...CACHE_WRITE_TTL, ...REASONING]);

function first(ctx: SpanCtx, d: Record<string, unknown>, names: readonly string[]): Count | undefined {
  let found: Count | undefined;
  for (const name of names) {
    if (d[name] === undefined || d[name] === null) continue;
    const value = asCount(d[name]);
    if (value === undefined) ctx.ignore(`${LF_USAGE}.${name}`, `not a token count: ${preview(d[name])}`);
    else if (!found) found = { value, key: LF_USAGE };
    else ctx.ignore(`${LF_USAGE}.${name}`, `superseded by an earlier name in ${LF_USAGE}`);
  }
  return found;
}

/** usage_details as usage parts; undefined when the span has none or it holds no count. */
export function langfuseUsageParts(ctx: SpanCtx): UsageParts | undefined {
  if (ctx.a[LF_USAGE] === undefined) return undefined;
  const d = ctx.structured(LF_USAGE);
  if (!isObj(d)) {
    if (d !== undefined) ctx.ignore(LF_USAGE, `not a JSON object: ${preview(ctx.a[LF_USAGE])}`);
    return undefined;
  }
  const parts: UsageParts = {};
  const input = first(ctx, d, INPUT);
  const output = first(ctx, d, OUTPUT);
  const total = first(ctx, d, TOTAL);
  const cacheRead = first(ctx, d, CACHE_READ);
  let cacheWrite = first(ctx, d, CACHE_WRITE);
  if (!cacheWrite) {
    const ttl = CACHE_WRITE_TTL.map((n) => asCount(d[n])).filter((n): n is number => n !== undefined);
    if (ttl.length) cacheWrite = { value: ttl.reduce((x, y) => x + y, 0), key: LF_USAGE };
  }
  const reasoning = first(ctx, d, REASONING);
  if (input) parts.input = input;
  if (output) parts.output = output;
  if (total) parts.total = total;
  if (cacheRead) parts.cacheRead = cacheRead;
  if (cacheWrite) parts.cacheWrite = cacheWrite;
  if (reasoning) parts.reasoning = reasoning;
  // Langfuse's own names are disjoint types; other input_*/output_* types (audio, image) add to
  // their side when the parts are disjoint, and are priced at the plain input/output rate.
  const native = d['input'] !== undefined || d['output'] !== undefined;
  if (native) parts.disjoint = true;
  for (const name of Object.keys(d)) {
    if (KNOWN.has(name)) continue;
    const value = asCount(d[name]);
    const side = name.startsWith('input_') ? parts.input : name.startsWith('output_') ? parts.output : undefined;
    const detail = DETAIL_NAMES.get(name);
    if (native && side && value !== undefined) {
      side.value += value;
      ctx.ignore(
        `${LF_USAGE}.${name}`,
        detail
          ? `added to ${name.startsWith('input_') ? 'input' : 'output'}, of which it is priced as ${detail} (usage.details)`
          : `a usage type with no price of its own: added to ${name.startsWith('input_') ? 'input' : 'output'}`,
      );
    } else if (!detail) ctx.ignore(`${LF_USAGE}.${name}`, 'not a usage type Traceloom counts');
  }
  return input || output || cacheRead || cacheWrite || reasoning || total ? parts : undefined;
}

/** cost_details: its `total`, else the exact sum of its amounts; an exact decimal string. */
export function langfuseCost(ctx: SpanCtx): string | undefined {
  if (ctx.a[LF_COST] === undefined) return undefined;
  const d = ctx.structured(LF_COST);
  if (!isObj(d)) {
    if (d !== undefined) ctx.ignore(LF_COST, `not a JSON object: ${preview(ctx.a[LF_COST])}`);
    return undefined;
  }
  const amount = (v: unknown): bigint | undefined => {
    try {
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return toScaled(numberToDecimal(v), SCALE);
      if (typeof v === 'string' && v.trim() !== '' && !v.trim().startsWith('-')) return toScaled(v, SCALE);
    } catch {
      /* not a decimal: noted below */
    }
    return undefined;
  };
  const total = d['total'] !== undefined ? amount(d['total']) : undefined;
  if (total !== undefined) return fromScaled(total, SCALE);
  let sum = 0n;
  let any = false;
  for (const [k, v] of Object.entries(d)) {
    const a = amount(v);
    if (a === undefined) ctx.ignore(`${LF_COST}.${k}`, `not an amount: ${preview(v)}`);
    else {
      sum += a;
      any = true;
    }
  }
  return any ? fromScaled(sum, SCALE) : undefined;
}
/** Amounts are summed at 1e-15 USD, finer than any per-token price, then stored at nano-dollars. */
const SCALE = 15;

/** Langfuse input/output of any shape as messages: message lists as such, anything else as one message of text. */
export function langfuseMessages(ctx: SpanCtx, key: string, role: string): NormalizedMessage[] {
  const v = ctx.structured(key);
  if (v === undefined || v === null) return [];
  const out = normalizeMessages(v, role);
  if (out.length > 0) return out;
  return [{ role, content: toText(v) }];
}
