// JSON trace bodies → DecodedSpans. Two shapes arrive on application/json: standard OTLP/JSON
// (`resourceSpans`; lenient about what real senders do: snake_case keys, uppercase hex, enum
// names, int64 as number or string, "NaN" doubles) and the flat form of the service spec
// (`{"spans":[{trace_id, span_name, attributes:{...}}]}`). Per-span problems reject that span;
// only a document of neither shape is a 400.
import { badRequest } from '../../errors.ts';
import {
  DEFAULT_DECODE_LIMITS,
  type Attributes,
  type DecodedEvent,
  type DecodedLink,
  type DecodedSpan,
  type DecodeLimits,
  type DecodeResult,
  type RejectedSpan,
} from '../../executions/span.ts';
import { addNote, countNote, echoId, idProblem, spanKindFrom, statusCodeFrom } from './validate.ts';
import { DIGITS, hexId, isObj, JsonAttributeReader, nsFrom, pick, show, str, type Obj } from './json-attributes.ts';

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

/** The flat form's event `timestamp`: ISO 8601, epoch nanoseconds, or epoch milliseconds (below 1e15). */
function eventTimeFrom(v: unknown): bigint | undefined {
  if (typeof v === 'string' && !DIGITS.test(v)) {
    const ms = Date.parse(v);
    return Number.isFinite(ms) && ms >= 0 ? BigInt(ms) * 1_000_000n : undefined;
  }
  const n = nsFrom(v);
  return n !== undefined && n > 0n && n < 1_000_000_000_000_000n ? n * 1_000_000n : n;
}

class Reject extends Error {}

class JsonTraceDecoder extends JsonAttributeReader {
  readonly spans: DecodedSpan[] = [];
  readonly rejected: RejectedSpan[] = [];
  private index = 0;

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
      const kindRaw = flat ? (s.span_kind ?? s.kind) : s.kind;
      const kind = spanKindFrom(kindRaw);
      if (kind === undefined)
        throw new Reject(`${flat ? 'span_kind' : 'kind'}: must be 0-5 or a SpanKind name such as CLIENT; got ${show(kindRaw)}`);
      const codeRaw = flat ? (s.status_code ?? status.code) : status.code;
      const statusCode = statusCodeFrom(codeRaw);
      if (statusCode === undefined)
        throw new Reject(`${flat ? 'status_code' : 'status.code'}: must be 0-2 or UNSET, OK, ERROR; got ${show(codeRaw)}`);
      const startTimeNs = this.time(s, flat ? 'start_time_ns' : 'startTimeUnixNano', 'start_time_unix_nano');
      const endTimeNs = this.time(s, flat ? 'end_time_ns' : 'endTimeUnixNano', 'end_time_unix_nano');
      this.ctx = 'name';
      this.attrKey = '';
      const name = this.cut(str(flat ? (s.span_name ?? s.name) : s.name));
      this.ctx = 'status.message';
      const statusMessage = this.cut(str(flat ? (s.status_message ?? status.message) : status.message));
      const attributes = this.attributes(s.attributes, notes, 'attributes');
      const events = this.events(s.events, flat);
      const links = this.links(s.links);
      const scope = flat && isObj(s.scope) ? s.scope : undefined;
      if (resourceNotes.length > 0) notes.push(...resourceNotes);
      this.spans.push({
        traceId: traceId!,
        spanId: spanId!,
        parentSpanId: parentSpanId!,
        name,
        kind,
        startTimeNs,
        endTimeNs,
        attributes,
        events,
        links,
        statusCode,
        statusMessage,
        resource,
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
    if (ns === undefined)
      throw new Reject(`${key}: must be an integer number of nanoseconds since the epoch (a string or a number); got ${show(v)}`);
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
      if (timeNs === undefined)
        throw new Reject(`events[${i}]: time must be an integer number of nanoseconds; got ${show(raw ?? e.timestamp)}`);
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
}
