// What every part of the mapper shares for one span: the attributes, value coercion that never
// throws, JSON strings parsed once, and the explain record (what was mapped, what was ignored).
import type { Attributes, DecodedSpan, MappedSpan } from '../../executions/span.ts';

export type Explain = MappedSpan['explain'];

/** A malformed value (bad JSON, wrong type) reads as this, never as an exception. */
export const MALFORMED: unique symbol = Symbol('malformed');

/** Bounds: a hostile or broken span costs at most this much work and this much explain text. */
export const LIMITS = { messages: 5000, parts: 5000, toolCalls: 1000, index: 100_000, ignored: 200, preview: 60, depth: 32 };

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A non-empty trimmed string; undefined for anything else. */
export function asStr(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  return s === '' ? undefined : s;
}

/** An identifier: a non-empty string, or a finite number spelled as a string (ids sent as ints). */
export function asId(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  return asStr(v);
}

/** A token count from an int, a double or a decimal string; undefined when it is not one. */
export function asCount(v: unknown): number | undefined {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    const s = v.trim();
    if (s === '') return undefined;
    n = Number(s);
  } else return undefined;
  if (!Number.isFinite(n) || n < 0) return undefined;
  return Math.round(n);
}

/** True when a string's first non-blank character opens a JSON object or array. */
export function looksLikeJson(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    return c === 123 /* { */ || c === 91; /* [ */
  }
  return false;
}

/** A JSON object or array spelled as a string → its value; other strings and values pass through; bad JSON → MALFORMED. */
export function parseStructured(v: unknown): unknown {
  if (typeof v !== 'string' || !looksLikeJson(v)) return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return MALFORMED;
  }
}

/** Opportunistic parse for text that may hold JSON (message content): undefined when it does not parse. */
export function parseLoose(s: string): unknown {
  if (!looksLikeJson(s)) return undefined;
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

/** A short, safe rendering of a value for explain reasons. */
export function preview(v: unknown): string {
  let s: string;
  if (typeof v === 'string') s = JSON.stringify(v.length > LIMITS.preview ? `${v.slice(0, LIMITS.preview)}…` : v);
  else if (Array.isArray(v)) s = `array(${v.length})`;
  else if (isObj(v)) s = 'object';
  else s = String(v);
  return s;
}

/** Any value as display text: strings as they are, everything else as JSON (never throws). */
export function toText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export class SpanCtx {
  readonly a: Attributes;
  readonly explain: Explain = { mapped: {}, ignored: [] };
  private parsed: Map<string, unknown> | undefined;

  constructor(readonly span: DecodedSpan) {
    this.a = isObj(span.attributes) ? span.attributes : {};
  }

  has(key: string): boolean {
    return this.a[key] !== undefined;
  }

  map(field: string, source: string): void {
    this.explain.mapped[field] = source;
  }

  ignore(key: string, reason: string): void {
    const list = this.explain.ignored;
    if (list.length < LIMITS.ignored) list.push({ key, reason });
  }

  /**
   * A span attribute holding structure (a JSON string or an AnyValue array/kvlist), parsed once per
   * span however many readers ask. Undefined when absent; malformed JSON is noted once and reads
   * as undefined.
   */
  structured(key: string): unknown {
    const raw = this.a[key];
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'string') return raw;
    this.parsed ??= new Map();
    if (this.parsed.has(key)) return this.parsed.get(key);
    let value = parseStructured(raw);
    if (value === MALFORMED) {
      this.ignore(key, `malformed JSON: ${preview(raw)}`);
      value = undefined;
    }
    this.parsed.set(key, value);
    return value;
  }
}
