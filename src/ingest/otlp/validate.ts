// What the three decoders share: id validation, enum names, and the notes a decoder writes when
// it cuts something to stay within DecodeLimits.
import type { AttrValue, Attributes } from '../../executions/span.ts';

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * Why a span's ids are unusable, or undefined when they are fine. Ids are lowercase hex as decoded
 * (any length); `null` means the sender's value could not be read as an id at all. An OTLP logs
 * export posted to the traces endpoint decodes into spans without ids: this is what stops them.
 */
export function idProblem(traceId: string | null, spanId: string | null, parentSpanId: string | null): string | undefined {
  if (traceId === null || traceId.length !== 32 || traceId === ZERO_TRACE_ID) {
    return `trace_id: must be 16 bytes (32 hex characters), not all zero; got ${describeId(traceId)}`;
  }
  if (spanId === null || spanId.length !== 16 || spanId === ZERO_SPAN_ID) {
    return `span_id: must be 8 bytes (16 hex characters), not all zero; got ${describeId(spanId)}`;
  }
  if (parentSpanId === null || (parentSpanId.length !== 0 && parentSpanId.length !== 16)) {
    return `parent_span_id: must be empty or 8 bytes (16 hex characters); got ${describeId(parentSpanId)}`;
  }
  return undefined;
}

function describeId(hex: string | null): string {
  if (hex === null) return 'a value that is not hex';
  if (hex.length === 0) return 'none';
  if (/^0+$/.test(hex)) return `${hex.length / 2} zero bytes`;
  return `${hex.length / 2} bytes`;
}

/** An id that is safe to echo in a rejection (well-formed hex of a sane length), else undefined. */
export function echoId(hex: string | null): string | undefined {
  return hex !== null && hex.length > 0 && hex.length <= 32 ? hex : undefined;
}

const SPAN_KINDS: Record<string, number> = { UNSPECIFIED: 0, INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };
const STATUS_CODES: Record<string, number> = { UNSET: 0, OK: 1, ERROR: 2 };

/** SpanKind from an int or a name (`CLIENT`, `SPAN_KIND_CLIENT`, `client`); undefined when neither. */
export function spanKindFrom(v: unknown): number | undefined {
  return enumFrom(v, SPAN_KINDS, 'SPAN_KIND_', 5);
}

/** StatusCode from an int or a name (`ERROR`, `STATUS_CODE_ERROR`); undefined when neither. */
export function statusCodeFrom(v: unknown): number | undefined {
  return enumFrom(v, STATUS_CODES, 'STATUS_CODE_', 2);
}

function enumFrom(v: unknown, names: Record<string, number>, prefix: string, max: number): number | undefined {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 && v <= max ? v : undefined;
  if (typeof v !== 'string') return undefined;
  let s = v.trim().toUpperCase();
  if (/^\d+$/.test(s)) return enumFrom(Number(s), names, prefix, max);
  if (s.startsWith(prefix)) s = s.slice(prefix.length);
  return Object.prototype.hasOwnProperty.call(names, s) ? names[s] : undefined;
}

/** Clamp a protobuf enum to its known range: an open enum may carry values we do not know. */
export const knownOr0 = (v: number, max: number) => (v >= 0 && v <= max ? v : 0);

const MAX_NOTES = 32;

/**
 * Record what was cut. Bounded, so that a hostile span with a million oversized values costs a
 * few dozen strings, not a million.
 */
export function addNote(notes: string[], note: string): void {
  if (notes.length < MAX_NOTES) notes.push(note);
  else if (notes.length === MAX_NOTES) notes.push('more values were cut (notes stop here)');
}

export const countNote = (what: string, sent: number, kept: number) => `${what}: ${sent} sent, ${kept} kept`;
export const charsNote = (what: string, sent: number, kept: number) => `${what}: value of ${sent} characters cut to ${kept}`;
export const depthNote = (what: string, maxDepth: number) => `${what}: nesting deeper than ${maxDepth} levels cut`;

/**
 * Set an attribute without letting a key named `__proto__` replace the object's prototype
 * (plain assignment would; the sender controls the keys).
 */
export function setAttr(target: Attributes | { [key: string]: AttrValue }, key: string, value: AttrValue): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** int64 as a JS number when it is exact, else as its decimal string. */
export function int64Value(v: bigint): number | string {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v.toString();
}

/** Cut a string to at most `max` UTF-16 units without splitting a surrogate pair. */
export function cutChars(s: string, max: number): string {
  let n = max;
  if (n > 0 && n < s.length) {
    const c = s.charCodeAt(n - 1);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return s.slice(0, n);
}
