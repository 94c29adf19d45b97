// What the OTLP/JSON decoders (traces, logs) share: ids as hex (tolerating base64 and byte
// arrays), nanosecond times from strings or numbers, and attributes as OTLP's list of {key,value}
// AnyValues or as plain JSON objects, within the DecodeLimits (what is cut is noted where it sits).
import type { AttrValue, Attributes, DecodeLimits } from '../../executions/span.ts';
import { addNote, charsNote, countNote, cutChars, depthNote, int64Value, setAttr } from './validate.ts';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
export const DIGITS = /^\d+$/;
const INT = /^-?\d+$/;

/**
 * An id as lowercase hex. OTLP/JSON says hex; tolerate base64 (what protobuf's generic JSON
 * mapping produces) and byte arrays. null when it is none of those.
 */
export function hexId(v: unknown, bytes: number): string | null {
  if (v === undefined || v === null || v === '') return '';
  if (typeof v === 'string') {
    const hex = HEX.test(v) && v.length % 2 === 0;
    if (hex && v.length === bytes * 2) return v.toLowerCase();
    if (v.length <= 4 * Math.ceil(bytes / 3) && BASE64.test(v)) {
      const b = Buffer.from(v, 'base64');
      if (b.length === bytes) return b.toString('hex');
    }
    return hex ? v.toLowerCase() : null;
  }
  if (Array.isArray(v) && v.length <= 64 && v.every((x) => Number.isInteger(x) && x >= 0 && x <= 255))
    return Buffer.from(v as number[]).toString('hex');
  return null;
}

/** Nanoseconds from a decimal string or an integer number; 0 when absent; undefined when invalid. */
export function nsFrom(v: unknown): bigint | undefined {
  if (v === undefined || v === null || v === '') return 0n;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : Number.isInteger(v) && v > 0 ? BigInt(v) : undefined;
  if (typeof v === 'string' && DIGITS.test(v) && v.length <= 20) {
    const n = BigInt(v);
    return n < 2n ** 64n ? n : undefined;
  }
  return undefined;
}

/** A value for a message: short, and never a recursive walk of something the sender nested deeply. */
export function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object' && v !== null) return 'an object';
  return String(v);
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const pick = (o: Obj, camel: string, snake: string): unknown => (o[camel] !== undefined ? o[camel] : o[snake]);

export class JsonAttributeReader {
  protected notes: string[] = [];
  protected ctx = '';
  protected attrKey = '';

  constructor(protected readonly limits: DecodeLimits) {}

  /** OTLP's list of {key, value}; a plain object (the flat form, or a lenient sender) works too. */
  protected attributes(list: unknown, notes: string[], ctx: string): Attributes {
    if (isObj(list)) return this.plainAttributes(list, notes, ctx);
    const out: Attributes = {};
    if (!Array.isArray(list)) return out;
    this.notes = notes;
    this.ctx = ctx;
    const max = this.limits.maxAttributes;
    if (list.length > max) addNote(notes, countNote(ctx, list.length, max));
    for (let i = 0; i < list.length && i < max; i++) {
      const kv: unknown = list[i];
      if (!isObj(kv) || typeof kv.key !== 'string') continue;
      this.attrKey = kv.key;
      setAttr(out, kv.key, this.anyValue(kv.value, 0));
    }
    return out;
  }

  protected plainAttributes(o: Obj, notes: string[], ctx: string): Attributes {
    const out: Attributes = {};
    this.notes = notes;
    this.ctx = ctx;
    const max = this.limits.maxAttributes;
    let n = 0;
    for (const key in o) {
      if (n++ >= max) continue;
      this.attrKey = key;
      setAttr(out, key, this.plain(o[key], 0));
    }
    if (n > max) addNote(notes, countNote(ctx, n, max));
    return out;
  }

  protected where(): string {
    return this.attrKey === '' ? this.ctx : `${this.ctx}.${this.attrKey}`;
  }

  protected cut(s: string): string {
    const max = this.limits.maxValueChars;
    if (s.length <= max) return s;
    addNote(this.notes, charsNote(this.where(), s.length, max));
    return cutChars(s, max);
  }

  protected tooDeep(depth: number): boolean {
    if (depth < this.limits.maxDepth) return false;
    addNote(this.notes, depthNote(this.where(), this.limits.maxDepth));
    return true;
  }

  /** A plain JSON value (flat form attributes), kept as is within the limits. */
  protected plain(v: unknown, depth: number): AttrValue {
    if (typeof v === 'string') return this.cut(v);
    if (typeof v === 'number' || typeof v === 'boolean' || v === null) return v;
    if (Array.isArray(v)) return this.tooDeep(depth) ? null : v.map((x) => this.plain(x, depth + 1));
    if (isObj(v)) {
      if (this.tooDeep(depth)) return null;
      const out: { [key: string]: AttrValue } = {};
      for (const k in v) setAttr(out, k, this.plain(v[k], depth + 1));
      return out;
    }
    return null; // undefined, bigint, functions: not JSON
  }

  /** An OTLP/JSON AnyValue. A bare JSON value where an AnyValue belongs is kept as a plain value. */
  protected anyValue(v: unknown, depth: number): AttrValue {
    if (!isObj(v)) return this.plain(v, depth);
    let out: AttrValue = null;
    for (const k in v) {
      const x = v[k];
      switch (k) {
        case 'stringValue':
        case 'string_value':
          out = typeof x === 'string' ? this.cut(x) : x === null ? null : this.invalid(k, x);
          break;
        case 'boolValue':
        case 'bool_value':
          out = typeof x === 'boolean' ? x : x === 'true' ? true : x === 'false' ? false : this.invalid(k, x);
          break;
        case 'intValue':
        case 'int_value':
          out =
            typeof x === 'number' && Number.isInteger(x)
              ? Number.isSafeInteger(x)
                ? x
                : BigInt(x).toString()
              : typeof x === 'string' && INT.test(x) && x.length <= 20
                ? int64Value(BigInt.asIntN(64, BigInt(x)))
                : this.invalid(k, x);
          break;
        case 'doubleValue':
        case 'double_value':
          out =
            typeof x === 'number'
              ? x
              : typeof x === 'string' && x.trim() !== '' && !Number.isNaN(Number(x))
                ? Number(x)
                : x === 'NaN'
                  ? NaN
                  : this.invalid(k, x);
          break;
        case 'bytesValue':
        case 'bytes_value':
          out = typeof x === 'string' ? this.cut(x) : this.invalid(k, x);
          break;
        case 'arrayValue':
        case 'array_value': {
          const values = isObj(x) ? x.values : undefined;
          out = this.tooDeep(depth) ? null : Array.isArray(values) ? values.map((e) => this.anyValue(e, depth + 1)) : [];
          break;
        }
        case 'kvlistValue':
        case 'kvlist_value': {
          const values = isObj(x) ? x.values : undefined;
          if (this.tooDeep(depth)) out = null;
          else {
            const obj: { [key: string]: AttrValue } = {};
            if (Array.isArray(values))
              for (const kv of values)
                if (isObj(kv) && typeof kv.key === 'string') setAttr(obj, kv.key, this.anyValue(kv.value, depth + 1));
            out = obj;
          }
          break;
        }
        default: // unknown fields are ignored (OTLP/JSON rule)
      }
    }
    return out;
  }

  protected invalid(kind: string, x: unknown): null {
    addNote(this.notes, `${this.where()}: invalid ${kind} ${show(x)} dropped`);
    return null;
  }
}
