// The one pass over a span's attribute keys: families of flattened, indexed keys cannot be looked
// up directly, so they are gathered here once. OpenInference `llm.input_messages.N.message.*` and
// `llm.output_messages.N.message.*`, Traceloop `gen_ai.prompt.N.*` and `gen_ai.completion.N.*`
// (both with nested tool_calls.K.*), and `gen_ai.prompt.variable.<name>`. Indices are kept in a
// Map, so a key like `llm.input_messages.999999.message.role` costs one entry, not an array.
import type { AttrValue, NormalizedMessage } from '../../executions/span.ts';
import { LIMITS, type SpanCtx } from './context.ts';
import { G, KEY_GROUPS, METADATA_PREFIXES } from './keys.ts';
import { normalizeMessage } from './normalize.ts';

/** index → (the rest of the key after "N.") → value */
export type Indexed = Map<number, Map<string, AttrValue>>;

export interface KeyScan {
  /** bit set of the key groups present (keys.ts G) */
  groups: number;
  /** the usage keys present (keys.ts USAGE group), for usage.ts to pick among */
  usageKeys: string[];
  oiIn?: Indexed;
  oiOut?: Indexed;
  tlIn?: Indexed;
  tlOut?: Indexed;
  promptVars?: Record<string, AttrValue>;
  /** keys of the metadata families (`langfuse.trace.metadata.*`, `traceloop.association.properties.*`, `ai.telemetry.metadata.*`) */
  metadataKeys?: string[];
}

const OI_IN = 'llm.input_messages.';
const OI_OUT = 'llm.output_messages.';
const TL_IN = 'gen_ai.prompt.';
const TL_OUT = 'gen_ai.completion.';
const PROMPT_VAR = 'gen_ai.prompt.variable.';
const [LF_META, TL_META, AI_META, LF_OBS_META] = METADATA_PREFIXES as [string, string, string, string];

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Adds `key` (whose index starts at `from`) to `into`; false when the index is not a small integer. */
function addIndexed(into: Indexed, key: string, from: number, value: AttrValue): boolean {
  let i = from;
  let n = 0;
  while (i < key.length && isDigit(key.charCodeAt(i))) {
    n = n * 10 + (key.charCodeAt(i) - 48);
    if (n > LIMITS.index) return false;
    i++;
  }
  if (i === from || key.charCodeAt(i) !== 46 /* . */ || i + 1 >= key.length) return false;
  let fields = into.get(n);
  if (!fields) into.set(n, (fields = new Map()));
  fields.set(key.slice(i + 1), value);
  return true;
}

export function scanKeys(ctx: SpanCtx): KeyScan {
  const scan: KeyScan = { groups: 0, usageKeys: [] };
  const a = ctx.a;
  for (const key in a) {
    const g = KEY_GROUPS.get(key);
    if (g !== undefined) {
      scan.groups |= g;
      if (g & G.USAGE) scan.usageKeys.push(key);
      continue;
    }
    const c = key.charCodeAt(0);
    const metaPrefix =
      c === 108 /* l */
        ? key.charCodeAt(9) === 111 /* langfuse.o */
          ? LF_OBS_META
          : LF_META
        : c === 116 /* t */
          ? TL_META
          : c === 97 /* a */
            ? AI_META
            : undefined;
    if (metaPrefix !== undefined && key.length > metaPrefix.length && key.startsWith(metaPrefix)) {
      (scan.metadataKeys ??= []).push(key);
    } else if (c === 108 /* l */) {
      if (key.startsWith(OI_IN)) {
        if (!addIndexed((scan.oiIn ??= new Map()), key, OI_IN.length, a[key]!)) ctx.ignore(key, 'not an indexed message key');
      } else if (key.startsWith(OI_OUT)) {
        if (!addIndexed((scan.oiOut ??= new Map()), key, OI_OUT.length, a[key]!)) ctx.ignore(key, 'not an indexed message key');
      }
    } else if (c === 103 /* g */ && key.startsWith('gen_ai.')) {
      if (key.startsWith(TL_IN)) {
        if (isDigit(key.charCodeAt(TL_IN.length))) {
          if (!addIndexed((scan.tlIn ??= new Map()), key, TL_IN.length, a[key]!)) ctx.ignore(key, 'not an indexed message key');
        } else if (key.startsWith(PROMPT_VAR) && key.length > PROMPT_VAR.length && key !== `${PROMPT_VAR}__proto__`)
          (scan.promptVars ??= {})[key.slice(PROMPT_VAR.length)] = a[key]!;
      } else if (key.startsWith(TL_OUT) && isDigit(key.charCodeAt(TL_OUT.length))) {
        if (!addIndexed((scan.tlOut ??= new Map()), key, TL_OUT.length, a[key]!)) ctx.ignore(key, 'not an indexed message key');
      }
    }
  }
  if (scan.oiIn || scan.oiOut || scan.tlIn || scan.tlOut) scan.groups |= G.MESSAGES;
  if (scan.promptVars) scan.groups |= G.PROMPT;
  if (scan.metadataKeys) scan.groups |= G.TRACE;
  return scan;
}

type Sub = Map<number, Record<string, AttrValue>>;

/** `contents.M.<inner>field` or `tool_calls.K.<inner>field` → into[M][field]; broken indices are dropped. */
function subIndex(rest: string, prefix: string, into: Sub, inner: string, value: AttrValue): void {
  const dot = rest.indexOf('.', prefix.length);
  if (dot < 0) return;
  const k = Number(rest.slice(prefix.length, dot));
  if (!Number.isInteger(k) || k < 0 || k > LIMITS.index) return;
  let field = rest.slice(dot + 1);
  if (inner && field.startsWith(inner)) field = field.slice(inner.length);
  if (field === '__proto__') return;
  let entry = into.get(k);
  if (!entry) into.set(k, (entry = {}));
  entry[field] = value;
}

function byKey(x: number, y: number): number {
  return x - y;
}

function sorted<T>(m: Map<number, T>): T[] {
  if (m.size === 1) return [...m.values()];
  return [...m.keys()].sort(byKey).map((k) => m.get(k)!);
}

/**
 * Rebuilds the flattened messages into message objects, then normalises them like any other.
 * OpenInference fields sit under `message.`, with `contents.M.message_content.*` and
 * `tool_calls.K.tool_call.*`; Traceloop fields are bare, with `tool_calls.K.*` and `function_call.*`.
 */
export function rebuildIndexed(indexed: Indexed, defaultRole: string): NormalizedMessage[] {
  const out: NormalizedMessage[] = [];
  for (const fields of sorted(indexed)) {
    if (out.length >= LIMITS.messages) break;
    const raw: Record<string, unknown> = {};
    let contents: Sub | undefined;
    let calls: Sub | undefined;
    let fn: Record<string, AttrValue> | undefined;
    for (const [key, value] of fields) {
      const rest = key.startsWith('message.') ? key.slice(8) : key;
      if (rest.charCodeAt(0) === 99 /* c */ && rest.startsWith('contents.'))
        subIndex(rest, 'contents.', (contents ??= new Map()), 'message_content.', value);
      else if (rest.charCodeAt(0) === 116 /* t */ && rest.startsWith('tool_calls.'))
        subIndex(rest, 'tool_calls.', (calls ??= new Map()), 'tool_call.', value);
      else if (rest === '__proto__' || rest === 'function_call.__proto__') continue;
      else if (rest.startsWith('function_call.')) (fn ??= {})[rest.slice(14)] = value;
      else raw[rest] = value;
    }
    if (contents && raw['content'] === undefined) {
      raw['content'] = sorted(contents).map((c) => {
        const url = c['image.image.url'];
        return c['type'] === 'image' || url !== undefined ? { type: 'image', url } : { type: 'text', text: c['text'] ?? '' };
      });
    }
    if (calls) {
      raw['tool_calls'] = sorted(calls).map((c) => ({
        id: c['id'] ?? '',
        name: c['function.name'] ?? c['name'] ?? '',
        arguments: c['function.arguments'] ?? c['arguments'] ?? null,
      }));
    }
    if (fn) raw['function_call'] = fn;
    if (raw['role'] === undefined && raw['content'] === undefined && raw['tool_calls'] === undefined && raw['function_call'] === undefined)
      continue;
    normalizeMessage(raw, defaultRole, out);
  }
  return out;
}
