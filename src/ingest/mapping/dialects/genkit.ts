// Firebase Genkit (`genkit:*` attributes, colon-separated). An action's kind is
// genkit:metadata:subtype (model, embedder, tool, flow, retriever, ...), else genkit:type (flow,
// action, util). A model action names its model as "<plugin>/<model>" in genkit:name, carries the
// GenerateRequest in genkit:input and the GenerateResponse, with its usage, in genkit:output.
// Gemini's usage through Genkit: inputTokens includes cachedContentTokens; outputTokens excludes
// thoughtsTokens, which totalTokens includes (the rule in usage.ts sees it from the numbers).
import type { NormalizedMessage, SpanClass } from '../../../executions/span.ts';
import { asStr, isObj, type SpanCtx } from '../context.ts';
import { normalizeMessages } from '../normalize.ts';
import { jsonParts, type UsageParts } from '../usage.ts';

const SUBTYPE = 'genkit:metadata:subtype';
const TYPE = 'genkit:type';
const NAME = 'genkit:name';
const INPUT = 'genkit:input';
const OUTPUT = 'genkit:output';

const SUBTYPES: Record<string, SpanClass> = {
  model: 'inference',
  'background-model': 'inference',
  embedder: 'inference',
  tool: 'tool',
  flow: 'agent',
  'executable-prompt': 'other',
  prompt: 'other',
  retriever: 'other',
  indexer: 'other',
  evaluator: 'other',
  reranker: 'other',
  util: 'other',
};

/** [class, the key and value that decided it]; undefined when the span is not a Genkit span. */
export function genkitClass(ctx: SpanCtx): [SpanClass, string, string] | undefined {
  const subtype = asStr(ctx.a[SUBTYPE]);
  if (subtype && SUBTYPES[subtype]) return [SUBTYPES[subtype], SUBTYPE, subtype];
  const type = asStr(ctx.a[TYPE]);
  if (type === 'flow') return ['agent', TYPE, type];
  if (type) return ['other', TYPE, type];
  return undefined;
}

function isModel(ctx: SpanCtx): boolean {
  const subtype = ctx.a[SUBTYPE];
  return subtype === 'model' || subtype === 'background-model' || subtype === 'embedder';
}

/** The model of a model action: genkit:name less its plugin prefix; the plugin, which names the vendor. */
export function genkitModel(ctx: SpanCtx): { model: string; plugin: string } | undefined {
  if (!isModel(ctx)) return undefined;
  const name = asStr(ctx.a[NAME]);
  if (!name) return undefined;
  const slash = name.indexOf('/');
  return slash > 0 ? { model: name.slice(slash + 1), plugin: name.slice(0, slash) } : { model: name, plugin: '' };
}

/** The usage in a model action's GenerateResponse. */
export function genkitUsageParts(ctx: SpanCtx): UsageParts {
  if (!isModel(ctx)) return {};
  const res = ctx.structured(OUTPUT);
  return jsonParts(isObj(res) ? res['usage'] : undefined, OUTPUT, 'usage.', {
    input: 'inputTokens',
    output: 'outputTokens',
    cacheRead: 'cachedContentTokens',
    reasoning: 'thoughtsTokens',
    total: 'totalTokens',
  });
}

/** A model action's request messages and response message (else its first candidate's). */
export function genkitMessages(ctx: SpanCtx, side: 'input' | 'output'): NormalizedMessage[] {
  if (!isModel(ctx)) return [];
  if (side === 'input') {
    const req = ctx.structured(INPUT);
    return isObj(req) ? normalizeMessages(req['messages'], 'user') : [];
  }
  const res = ctx.structured(OUTPUT);
  if (!isObj(res)) return [];
  if (res['message'] !== undefined) return normalizeMessages(res['message'], 'assistant');
  const candidates = res['candidates'];
  if (Array.isArray(candidates) && isObj(candidates[0])) return normalizeMessages(candidates[0]['message'], 'assistant');
  return [];
}

export const GENKIT_SESSION = 'genkit:sessionId';
export const GENKIT_TOOL = { name: NAME, input: INPUT, output: OUTPUT };
