// The scalar fields of a mapped span: model, agent, conversation, tool call, error and a cost the
// span states itself. Each reads its keys in the order of docs/otel-mapping.md and records the
// key it used; a present key that lost to an earlier one, or that held the wrong type, is listed
// as ignored with the reason.
import type { SpanClass } from '../../executions/span.ts';
import { numberToDecimal } from '../../decimal.ts';
import { asId, asStr, MALFORMED, parseStructured, preview, type SpanCtx } from './context.ts';
import { LF_COST, langfuseCost } from './dialects/langfuse.ts';
import {
  AGENT_KEYS,
  AGENT_KEYS_TRACELOOP,
  COST_KEYS,
  MODEL_KEYS,
  SESSION_KEYS,
  TOOL_ARG_KEYS,
  TOOL_ID_KEYS,
  TOOL_NAME_KEYS,
  TOOL_RESULT_KEYS,
} from './keys.ts';

/** The first key of `keys` holding a usable value (per `read`); later present keys are noted as superseded. */
export function firstOf(
  ctx: SpanCtx,
  field: string,
  keys: readonly string[],
  read: (v: unknown) => string | undefined,
  what: string,
): string {
  let found: string | undefined;
  let foundKey = '';
  for (const key of keys) {
    const raw = ctx.a[key];
    if (raw === undefined || raw === null) continue;
    const v = read(raw);
    if (v === undefined) {
      if (!(typeof raw === 'string' && raw.trim() === '')) ctx.ignore(key, `not ${what}: ${preview(raw)}`);
      continue;
    }
    if (found === undefined) {
      found = v;
      foundKey = key;
      ctx.map(field, key);
    } else ctx.ignore(key, v === found ? `superseded by ${foundKey}` : `superseded by ${foundKey} (${preview(v)})`);
  }
  return found ?? '';
}

export function mapModel(ctx: SpanCtx): string {
  return firstOf(ctx, 'model', MODEL_KEYS, asStr, 'a model name');
}

/**
 * The agent this span itself names. traceloop.entity.name names an agent only on a
 * traceloop.span.kind=agent span; Pydantic AI v2's `agent_name` is accepted last. Ancestors and
 * service.name are trace assembly's fallbacks.
 */

export function mapAgent(ctx: SpanCtx): string {
  const keys = ctx.a['traceloop.span.kind'] === 'agent' ? AGENT_KEYS_TRACELOOP : AGENT_KEYS;
  return firstOf(ctx, 'agentId', keys, asId, 'an agent name');
}

export function mapSession(ctx: SpanCtx): string {
  return firstOf(ctx, 'sessionId', SESSION_KEYS, asId, 'a session id');
}

export interface ToolFields {
  toolName: string;
  toolCallId: string;
  toolArguments?: unknown;
  toolResult?: unknown;
}

/** A tool payload: JSON strings become their value, plain text stays text. */
function payload(ctx: SpanCtx, keys: readonly string[], field: string): unknown {
  for (const key of keys) {
    const raw = ctx.a[key];
    if (raw === undefined || raw === null) continue;
    let v = parseStructured(raw);
    if (v === MALFORMED) v = raw; // text that merely starts like JSON: keep it as sent
    ctx.map(field, key);
    return v;
  }
  return undefined;
}

/** Tool fields, on tool spans only (an inference span's tool calls are in its messages). */
export function mapTool(ctx: SpanCtx, spanClass: SpanClass): ToolFields {
  if (spanClass !== 'tool') return { toolName: '', toolCallId: '' };
  const nameKeys = ctx.a['traceloop.span.kind'] === 'tool' ? [...TOOL_NAME_KEYS, 'traceloop.entity.name'] : TOOL_NAME_KEYS;
  let toolName = firstOf(ctx, 'toolName', nameKeys, asStr, 'a tool name');
  const spanName = ctx.span.name ?? '';
  if (!toolName && spanName.startsWith('execute_tool ')) {
    toolName = spanName.slice('execute_tool '.length).trim();
    if (toolName) ctx.map('toolName', 'span name (execute_tool {name})');
  }
  const toolCallId = firstOf(ctx, 'toolCallId', TOOL_ID_KEYS, asId, 'a tool call id');
  const out: ToolFields = { toolName, toolCallId };
  const args = payload(
    ctx,
    ctx.a['traceloop.span.kind'] === 'tool' ? [...TOOL_ARG_KEYS, 'traceloop.entity.input'] : TOOL_ARG_KEYS,
    'toolArguments',
  );
  if (args !== undefined) out.toolArguments = args;
  const result = payload(
    ctx,
    ctx.a['traceloop.span.kind'] === 'tool' ? [...TOOL_RESULT_KEYS, 'traceloop.entity.output'] : TOOL_RESULT_KEYS,
    'toolResult',
  );
  if (result !== undefined) out.toolResult = result;
  return out;
}

/**
 * Span status ERROR → the status message › an `exception` event's message › error.type.
 * error.type on a span whose status is not ERROR is not trusted (semconv sets both together).
 */
export function mapError(ctx: SpanCtx): string {
  const errorType = asStr(ctx.a['error.type']);
  if (ctx.span.statusCode !== 2) {
    if (errorType) ctx.ignore('error.type', 'span status is not ERROR');
    return '';
  }
  const message = asStr(ctx.span.statusMessage);
  if (message) {
    ctx.map('errorMessage', 'status.message');
    return message;
  }
  const events = Array.isArray(ctx.span.events) ? ctx.span.events : [];
  for (const e of events) {
    if (e?.name !== 'exception') continue;
    const m = asStr(e.attributes?.['exception.message']) ?? asStr(e.attributes?.['exception.type']);
    if (m) {
      ctx.map('errorMessage', 'exception event');
      return m;
    }
  }
  if (errorType) {
    ctx.map('errorMessage', 'error.type');
    return errorType;
  }
  return '';
}

const DECIMAL = /^\d+(?:\.\d+)?$/;

/** An amount as an exact decimal string (the shortest spelling of a number; strings kept, trailing zeros dropped). */
export function toDecimalString(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? numberToDecimal(v) : undefined;
  if (typeof v !== 'string') return undefined;
  let s = v.trim();
  if (s.startsWith('+')) s = s.slice(1);
  if (!DECIMAL.test(s)) {
    const n = s === '' ? NaN : Number(s); // e.g. "1.5e-7"
    return Number.isFinite(n) && n >= 0 ? numberToDecimal(n) : undefined;
  }
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  s = s.replace(/^0+(?=\d)/, '');
  return s;
}

/** The cost an inference span states itself; on any other span it would double its children's. */
export function mapProvidedCost(ctx: SpanCtx, spanClass: SpanClass, notCountedReason: string): string | undefined {
  if (spanClass !== 'inference') {
    for (const key of [LF_COST, ...COST_KEYS]) if (ctx.a[key] !== undefined) ctx.ignore(key, notCountedReason);
    return undefined;
  }
  const langfuse = langfuseCost(ctx); // explicit cost details outrank every other key
  if (langfuse !== undefined) {
    ctx.map('providedCostUsd', LF_COST);
    for (const key of COST_KEYS) if (ctx.a[key] !== undefined) ctx.ignore(key, `superseded by ${LF_COST}`);
    return langfuse;
  }
  const cost = firstOf(ctx, 'providedCostUsd', COST_KEYS, toDecimalString, 'a decimal amount');
  return cost === '' ? undefined : cost;
}
