// Vercel AI SDK (`ai`, v3–v6; v7 speaks OTel GenAI): operation ids that classify a span, the
// prompt and response payloads (ai.prompt.messages or ai.prompt; ai.response.text / toolCalls /
// object, v3's ai.result.*), and the cache and reasoning counts some providers report only in
// ai.response.providerMetadata. The
// metadata is read whenever the span carries it (not only beside ai.model.provider): other
// instrumentations forward it too. Anthropic's own usage.input_tokens is the uncached input, which
// lets the rule in usage.ts tell from the numbers whether the SDK's input count holds the cache.
import type { NormalizedMessage, SpanClass } from '../../../executions/span.ts';
import { asCount, asStr, isObj, toText, type SpanCtx } from '../context.ts';
import { normalizeMessage, normalizeMessages } from '../normalize.ts';
import type { Count, UsageParts } from '../usage.ts';

const METADATA = 'ai.response.providerMetadata';

/** The class an operation id (`ai.operationId`, the span name, or `operation.name`'s first word) gives. */
export function vercelClass(id: string): SpanClass | undefined {
  if (id.endsWith('.doGenerate') || id.endsWith('.doStream') || id.endsWith('.doEmbed')) return 'inference';
  switch (id) {
    case 'ai.toolCall':
      return 'tool'; // a tool execution: usage, if any, is its caller's
    case 'ai.generateText':
    case 'ai.streamText':
    case 'ai.generateObject':
    case 'ai.streamObject':
      return 'agent'; // outer call: carries the aggregate usage of its doGenerate/doStream children
    case 'ai.embed':
    case 'ai.embedMany':
      return 'other'; // wrapper of doEmbed, repeats its usage
    default:
      return undefined;
  }
}

/** `operation.name` is "<operationId> <functionId>": its first word. */
export function vercelOperationName(v: unknown): string | undefined {
  if (typeof v !== 'string' || !v.startsWith('ai.')) return undefined;
  const space = v.indexOf(' ');
  return space < 0 ? v : v.slice(0, space);
}

function count(v: unknown, path: string): Count | undefined {
  const value = asCount(v);
  return value === undefined ? undefined : { value, key: `${METADATA} (${path})` };
}

/** The usage parts in ai.response.providerMetadata: OpenAI, Anthropic and Bedrock spellings. */
export function providerMetadataParts(ctx: SpanCtx): UsageParts {
  const md = ctx.structured(METADATA);
  const out: UsageParts = {};
  if (!isObj(md)) return out;
  const openai = md['openai'];
  if (isObj(openai)) {
    out.cacheRead ??= count(openai['cachedPromptTokens'], 'openai.cachedPromptTokens');
    out.reasoning ??= count(openai['reasoningTokens'], 'openai.reasoningTokens');
  }
  const anthropic = md['anthropic'];
  if (isObj(anthropic)) {
    const u = anthropic['usage'];
    if (isObj(u)) {
      out.cacheRead ??= count(u['cache_read_input_tokens'], 'anthropic.usage.cache_read_input_tokens');
      out.cacheWrite ??= count(u['cache_creation_input_tokens'], 'anthropic.usage.cache_creation_input_tokens');
      out.uncached ??= count(u['input_tokens'], 'anthropic.usage.input_tokens');
    }
    out.cacheWrite ??= count(anthropic['cacheCreationInputTokens'], 'anthropic.cacheCreationInputTokens');
  }
  const bedrock = md['bedrock'];
  if (isObj(bedrock) && isObj(bedrock['usage'])) {
    const u = bedrock['usage'];
    out.cacheRead ??= count(u['cacheReadInputTokens'], 'bedrock.usage.cacheReadInputTokens');
    out.cacheWrite ??= count(u['cacheWriteInputTokens'], 'bedrock.usage.cacheWriteInputTokens');
  }
  for (const k of Object.keys(out) as Array<keyof UsageParts>) if (out[k] === undefined) delete out[k];
  return out;
}

type Msgs = NormalizedMessage[];

export function vercelPrompt(ctx: SpanCtx): Msgs {
  if (ctx.has('ai.prompt.messages')) return normalizeMessages(ctx.structured('ai.prompt.messages'), 'user');
  const p = ctx.structured('ai.prompt'); // outer spans: {system?, prompt?} or {system?, messages}
  const out: Msgs = [];
  if (!isObj(p)) return typeof p === 'string' ? [{ role: 'user', content: p }] : out;
  const system = asStr(p['system']);
  if (system) out.push({ role: 'system', content: p['system'] as string });
  if (Array.isArray(p['messages'])) normalizeMessages(p['messages'], 'user', out);
  else if (typeof p['prompt'] === 'string') out.push({ role: 'user', content: p['prompt'] });
  else if (Array.isArray(p['prompt'])) normalizeMessages(p['prompt'], 'user', out);
  return out;
}

export function vercelResponse(ctx: SpanCtx): Msgs {
  const text = ctx.a['ai.response.text'] ?? ctx.a['ai.result.text'];
  const object = ctx.a['ai.response.object'] ?? ctx.a['ai.result.object'];
  const calls = ctx.has('ai.response.toolCalls') ? ctx.structured('ai.response.toolCalls') : ctx.structured('ai.result.toolCalls');
  const hasCalls = Array.isArray(calls) && calls.length > 0;
  if (typeof text !== 'string' && object === undefined && !hasCalls) return [];
  // An empty text beside tool calls is no text at all.
  const content = typeof text === 'string' && (text !== '' || !hasCalls) ? text : object !== undefined ? toText(object) : null;
  const out: Msgs = [];
  const msg: NormalizedMessage = { role: 'assistant', content };
  out.push(msg);
  if (hasCalls) {
    const withCalls: Msgs = [];
    normalizeMessage({ role: 'assistant', content: null, tool_calls: calls }, 'assistant', withCalls);
    if (withCalls[0]?.tool_calls) msg.tool_calls = withCalls[0].tool_calls;
  }
  return out;
}
