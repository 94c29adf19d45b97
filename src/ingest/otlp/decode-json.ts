// JSON trace bodies → DecodedSpans. Two shapes arrive on application/json: standard OTLP/JSON
// (`resourceSpans`; lenient about what real senders do: snake_case keys, uppercase hex, enum
// names, int64 as number or string, "NaN" doubles) and the flat form of the service spec
// (`{"spans":[{trace_id, span_name, attributes:{...}}]}`). Per-span problems reject that span;
// only a document of neither shape is a 400.
import { badRequest } from '../../errors.ts';
import {
  DEFAULT_DECODE_LIMITS,
  type AttrValue,
  type Attributes,
  type DecodedEvent,
  type DecodedLink,
  type DecodedSpan,
  type DecodeLimits,
  type DecodeResult,
  type RejectedSpan,
} from './span.ts';
import {
  addNote, charsNote, countNote, cutChars, depthNote, echoId, idProblem, int64Value, setAttr, spanKindFrom, statusCodeFrom,
} from './validate.ts';

type Obj = Record<string, unknown>;

const EXPECTED = 'Request body must be an OTLP/JSON ExportTraceServiceRequest ({"resourceSpans":[...]}) or the flat form ({"spans":[...]})';

export function decodeJsonTraces(doc: unknown, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodeResult {
  if (!isObj(doc)) throw badRequest(EXPECTED);
  const d = new JsonTraceDecoder(limits);
  const resourceSpans = doc.resourceSpans ?? doc.resource_spans;
  if (resourceSpans !== undefined && resourceSpans !== null) d.otlp(resourceSpans);
  else if (doc.spans !== undefined && doc.spans !== null) d.flat(doc);
  else if (Object.keys(doc).length > 0) throw badRequest(EXPECTED); // `{}` is an empty OTLP request
  return { spans: d.spans, rejected: d.rejected };
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const DIGITS = /^\d+$/;
const INT = /^-?\d+$/;

/**
 * An id as lowercase hex. OTLP/JSON says hex; tolerate base64 (what protobuf's generic JSON
 * mapping produces) and byte arrays. null when it is none of those.
 */
function hexId(v: unknown, bytes: number): string | null {
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
  if (Array.isArray(v) && v.length <= 64 && v.every((x) => Number.isInteger(x) && x >= 0 && x <= 255)) return Buffer.from(v as number[]).toString('hex');
  return null;
}

/** Nanoseconds from a decimal string or an integer number; 0 when absent; undefined when invalid. */
function nsFrom(v: unknown): bigint | undefined {
  if (v === undefined || v === null || v === '') return 0n;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : Number.isInteger(v) && v > 0 ? BigInt(v) : undefined;
  if (typeof v === 'string' && DIGITS.test(v) && v.length <= 20) {
    const n = BigInt(v);
    return n < 2n ** 64n ? n : undefined;
  }
  return undefined;
}

/** The flat form's event `timestamp`: ISO 8601, epoch nanoseconds, or epoch milliseconds (below 1e15). */
function eventTimeFrom(v: unknown): bigint | undefined {
  if (typeof v === 'string' && !DIGITS.test(v)) {
    const ms = Date.parse(v);
    return Number.isFinite(ms) && ms >= 0 ? BigInt(ms) * 1_000_000n : undefined;
  }
  const n = nsFrom(v);
  return n !== undefined && n > 0n && n < 1_000_000_000_000_000n ? n * 1_000_000n : n;
}

/** A value for a message: short, and never a recursive walk of something the sender nested deeply. */
function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object' && v !== null) return 'an object';
  return String(v);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const pick = (o: Obj, camel: string, snake: string): unknown => (o[camel] !== undefined ? o[camel] : o[snake]);

class Reject extends Error {}

class JsonTraceDecoder {
  readonly spans: DecodedSpan[] = [];
  readonly rejected: RejectedSpan[] = [];
  private index = 0;
  private notes: string[] = [];
  private ctx = '';
  private attrKey = '';

  constructor(private readonly limits: DecodeLimits) {}

  otlp(resourceSpans: unknown): void {
    if (!Array.isArray(resourceSpans)) throw badRequest('resourceSpans: must be an array');
    for (let i = 0; i < resourceSpans.length; i++) {
      const rs: unknown = resourceSpans[i];
      if (!isObj(rs)) throw badRequest(`resourceSpans[${i}]: must be an object`);
      const resourceNotes: string[] = [];
      const res = rs.resource;
      const resource = isObj(res) ? this.attributes(res.attributes, resourceNotes, 'resource.attributes') : {};
      const scopeSpans = pick(rs, 'scopeSpans', 'scope_spans') ?? rs.instrumentationLibrarySpans ?? [];
      if (!Array.isArray(scopeSpans)) throw badRequest(`resourceSpans[${i}].scopeSpans: must be an array`);
      for (let j = 0; j < scopeSpans.length; j++) {
        const ss: unknown = scopeSpans[j];
        if (!isObj(ss)) throw badRequest(`resourceSpans[${i}].scopeSpans[${j}]: must be an object`);
        const scope = ss.scope ?? ss.instrumentationLibrary;
        const scopeName = isObj(scope) ? str(scope.name) : '';
        const scopeVersion = isObj(scope) ? str(scope.version) : '';
        const spans = ss.spans ?? [];
        if (!Array.isArray(spans)) throw badRequest(`resourceSpans[${i}].scopeSpans[${j}].spans: must be an array`);
        for (const s of spans) this.span(s, false, resource, resourceNotes, scopeName, scopeVersion);
      }
    }
  }

  flat(doc: Obj): void {
    if (!Array.isArray(doc.spans)) throw badRequest('spans: must be an array');
    const sharedNotes: string[] = [];
    const shared = isObj(doc.resource) ? this.plainAttributes(doc.resource, sharedNotes, 'resource') : {};
    for (const s of doc.spans) {
      if (isObj(s) && isObj(s.resource)) {
        const notes: string[] = [];
        this.span(s, true, this.plainAttributes(s.resource, notes, 'resource'), notes, '', '');
      } else this.span(s, true, shared, sharedNotes, '', '');
    }
  }

  private span(s: unknown, flat: boolean, resource: Attributes, resourceNotes: string[], scopeName: string, scopeVersion: string): void {
    const index = this.index++;
    if (!isObj(s)) {
      this.rejected.push({ index, reason: 'span: must be an object' });
      return;
    }
    const traceId = hexId(pick(s, 'traceId', 'trace_id'), 16);
    const spanId = hexId(pick(s, 'spanId', 'span_id'), 8);
    const parentSpanId = hexId(pick(s, 'parentSpanId', 'parent_span_id'), 8);
    const idReason = idProblem(traceId, spanId, parentSpanId);
    if (idReason !== undefined) {
      this.rejected.push({ index, traceId: echoId(traceId), spanId: echoId(spanId), reason: idReason });
      return;
    }
    try {
      const notes: string[] = [];
      this.notes = notes;
      const status = isObj(s.status) ? s.status : {};
      const kindRaw = flat ? s.span_kind ?? s.kind : s.kind;
      const kind = spanKindFrom(kindRaw);
      if (kind === undefined) throw new Reject(`${flat ? 'span_kind' : 'kind'}: must be 0-5 or a SpanKind name such as CLIENT; got ${show(kindRaw)}`);
      const codeRaw = flat ? s.status_code ?? status.code : status.code;
      const statusCode = statusCodeFrom(codeRaw);
      if (statusCode === undefined) throw new Reject(`${flat ? 'status_code' : 'status.code'}: must be 0-2 or UNSET, OK, ERROR; got ${show(codeRaw)}`);
      const startTimeNs = this.time(s, flat ? 'start_time_ns' : 'startTimeUnixNano', 'start_time_unix_nano');
      const endTimeNs = this.time(s, flat ? 'end_time_ns' : 'endTimeUnixNano', 'end_time_unix_nano');
      this.ctx = 'name';
      this.attrKey = '';
      const name = this.cut(str(flat ? s.span_name ?? s.name : s.name));
      this.ctx = 'status.message';
      const statusMessage = this.cut(str(flat ? s.status_message ?? status.message : status.message));
      const attributes = this.attributes(s.attributes, notes, 'attributes');
      const events = this.events(s.events, flat);
      const links = this.links(s.links);
      const scope = flat && isObj(s.scope) ? s.scope : undefined;
      if (resourceNotes.length > 0) notes.push(...resourceNotes);
      this.spans.push({
        traceId: traceId!, spanId: spanId!, parentSpanId: parentSpanId!, name, kind, startTimeNs, endTimeNs, attributes, events, links,
        statusCode, statusMessage, resource,
        scopeName: scope ? str(scope.name) : flat ? str(s.scope_name) : scopeName,
        scopeVersion: scope ? str(scope.version) : flat ? str(s.scope_version) : scopeVersion,
        truncated: notes,
      });
    } catch (err) {
      if (!(err instanceof Reject)) throw err;
      this.rejected.push({ index, traceId: echoId(traceId), spanId: echoId(spanId), reason: err.message });
    }
  }

  private time(s: Obj, key: string, alt: string): bigint {
    const v = s[key] !== undefined ? s[key] : s[alt];
    const ns = nsFrom(v);
    if (ns === undefined) throw new Reject(`${key}: must be an integer number of nanoseconds since the epoch (a string or a number); got ${show(v)}`);
    return ns;
  }

  private events(list: unknown, flat: boolean): DecodedEvent[] {
    if (!Array.isArray(list)) return [];
    const max = this.limits.maxEvents;
    if (list.length > max) addNote(this.notes, countNote('events', list.length, max));
    const out: DecodedEvent[] = [];
    for (let i = 0; i < list.length && out.length < max; i++) {
      const e: unknown = list[i];
      if (!isObj(e)) continue;
      const raw = pick(e, 'timeUnixNano', 'time_unix_nano') ?? e.time_ns;
      const timeNs = raw === undefined && flat ? eventTimeFrom(e.timestamp) : nsFrom(raw);
      if (timeNs === undefined) throw new Reject(`events[${i}]: time must be an integer number of nanoseconds; got ${show(raw ?? e.timestamp)}`);
      out.push({ name: str(e.name), timeNs, attributes: this.attributes(e.attributes, this.notes, `events[${i}].attributes`) });
    }
    return out;
  }

  private links(list: unknown): DecodedLink[] {
    if (!Array.isArray(list)) return [];
    const out: DecodedLink[] = [];
    for (let i = 0; i < list.length; i++) {
      const l: unknown = list[i];
      if (!isObj(l)) continue;
      out.push({
        traceId: hexId(pick(l, 'traceId', 'trace_id'), 16) ?? '',
        spanId: hexId(pick(l, 'spanId', 'span_id'), 8) ?? '',
        attributes: this.attributes(l.attributes, this.notes, `links[${i}].attributes`),
      });
    }
    return out;
  }

  /** OTLP's list of {key, value}; a plain object (the flat form, or a lenient sender) works too. */
  private attributes(list: unknown, notes: string[], ctx: string): Attributes {
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

  private plainAttributes(o: Obj, notes: string[], ctx: string): Attributes {
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

  private where(): string {
    return this.attrKey === '' ? this.ctx : `${this.ctx}.${this.attrKey}`;
  }

  private cut(s: string): string {
    const max = this.limits.maxValueChars;
    if (s.length <= max) return s;
    addNote(this.notes, charsNote(this.where(), s.length, max));
    return cutChars(s, max);
  }

  private tooDeep(depth: number): boolean {
    if (depth < this.limits.maxDepth) return false;
    addNote(this.notes, depthNote(this.where(), this.limits.maxDepth));
    return true;
  }

  /** A plain JSON value (flat form attributes), kept as is within the limits. */
  private plain(v: unknown, depth: number): AttrValue {
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
  private anyValue(v: unknown, depth: number): AttrValue {
    if (!isObj(v)) return this.plain(v, depth);
    let out: AttrValue = null;
    for (const k in v) {
      const x = v[k];
      switch (k) {
        case 'stringValue': case 'string_value':
          out = typeof x === 'string' ? this.cut(x) : x === null ? null : this.invalid(k, x);
          break;
        case 'boolValue': case 'bool_value':
          out = typeof x === 'boolean' ? x : x === 'true' ? true : x === 'false' ? false : this.invalid(k, x);
          break;
        case 'intValue': case 'int_value':
          out = typeof x === 'number' && Number.isInteger(x) ? (Number.isSafeInteger(x) ? x : BigInt(x).toString()) : typeof x === 'string' && INT.test(x) && x.length <= 20 ? int64Value(BigInt.asIntN(64, BigInt(x))) : this.invalid(k, x);
          break;
        case 'doubleValue': case 'double_value':
          out = typeof x === 'number' ? x : typeof x === 'string' && x.trim() !== '' && !Number.isNaN(Number(x)) ? Number(x) : x === 'NaN' ? NaN : this.invalid(k, x);
          break;
        case 'bytesValue': case 'bytes_value':
          out = typeof x === 'string' ? this.cut(x) : this.invalid(k, x);
          break;
        case 'arrayValue': case 'array_value': {
          const values = isObj(x) ? x.values : undefined;
          out = this.tooDeep(depth) ? null : Array.isArray(values) ? values.map((e) => this.anyValue(e, depth + 1)) : [];
          break;
        }
        case 'kvlistValue': case 'kvlist_value': {
          const values = isObj(x) ? x.values : undefined;
          if (this.tooDeep(depth)) out = null;
          else {
            const obj: { [key: string]: AttrValue } = {};
            if (Array.isArray(values)) for (const kv of values) if (isObj(kv) && typeof kv.key === 'string') setAttr(obj, kv.key, this.anyValue(kv.value, depth + 1));
            out = obj;
          }
          break;
        }
        default: // unknown fields are ignored (OTLP/JSON rule)
      }
    }
    return out;
  }

  private invalid(kind: string, x: unknown): null {
    addNote(this.notes, `${this.where()}: invalid ${kind} ${show(x)} dropped`);
    return null;
  }
}
