// OTLP/protobuf ExportTraceServiceRequest → DecodedSpans, read by hand on protobufjs's Reader.
// Only the fields we keep are decoded; everything else is skipped by wire type. Every declared
// length is checked against its enclosing message before anything is read or allocated, so a
// hostile body costs at most one pass over its own bytes. Field numbers: reference part 4.
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
import { addNote, countNote, echoId, idProblem, knownOr0 } from './validate.ts';
import { AttributeReader, decodeOrRefuse, T_LEN1, T_LEN2, T_LEN3, T_LEN4 } from './proto-attributes.ts';

export function decodeProtobufTraces(body: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodeResult {
  // A Buffer view (no copy) makes protobufjs pick its BufferReader and lets us use native hex/utf8.
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const decoder = new TraceRequestDecoder(buf, limits);
  decodeOrRefuse('ExportTraceServiceRequest', () => decoder.request());
  return { spans: decoder.spans, rejected: decoder.rejected };
}

class TraceRequestDecoder extends AttributeReader {
  readonly spans: DecodedSpan[] = [];
  readonly rejected: RejectedSpan[] = [];
  private index = 0;
  // Status is read into these to avoid returning a small object.
  private statusCode = 0;
  private statusMessage = '';

  constructor(buf: Buffer, limits: DecodeLimits) {
    super(buf, limits);
  }

  request(): void {
    const r = this.r;
    const end = this.buf.length;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) this.resourceSpans(this.sub(end));
      else this.skip(tag, end);
    }
  }

  private resourceSpans(end: number): void {
    const r = this.r;
    // One object for every span of this resource, filled wherever the resource field sits.
    const resource: Attributes = {};
    const first = this.spans.length;
    const resourceNotes: string[] = [];
    let attrsSent = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) attrsSent += this.resource(this.sub(end), resource, resourceNotes, attrsSent);
      else if (tag === T_LEN2) this.scopeSpans(this.sub(end), resource);
      else this.skip(tag, end);
    }
    this.done(end);
    const max = this.limits.maxAttributes;
    if (attrsSent > max) addNote(resourceNotes, countNote('resource.attributes', attrsSent, max));
    if (resourceNotes.length > 0) for (let i = first; i < this.spans.length; i++) this.spans[i]!.truncated.push(...resourceNotes);
  }

  private scopeSpans(end: number, resource: Attributes): void {
    const r = this.r;
    const first = this.spans.length;
    let name = '',
      version = '';
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN2) this.span(this.sub(end), resource, name, version);
      else if (tag === T_LEN1) {
        // InstrumentationScope: name (1), version (2)
        const stop = this.sub(end);
        name = version = '';
        while (r.pos < stop) {
          const t = r.uint32();
          if (t === T_LEN1) name = this.string(stop);
          else if (t === T_LEN2) version = this.string(stop);
          else this.skip(t, stop);
        }
        this.done(stop);
      } else this.skip(tag, end);
    }
    this.done(end);
    // The scope may follow its spans on the wire (any field order is legal).
    for (let i = first; i < this.spans.length; i++) {
      const s = this.spans[i]!;
      s.scopeName = name;
      s.scopeVersion = version;
    }
  }

  private span(end: number, resource: Attributes, scopeName: string, scopeVersion: string): void {
    const r = this.r;
    const limits = this.limits;
    const index = this.index++;
    const notes: string[] = [];
    const attributes: Attributes = {};
    const events: DecodedEvent[] = [];
    const links: DecodedLink[] = [];
    let traceId = '',
      spanId = '',
      parentSpanId = '',
      name = '',
      statusMessage = '';
    let kind = 0,
      statusCode = 0,
      attrsSent = 0,
      eventsSent = 0;
    let startTimeNs = 0n,
      endTimeNs = 0n;
    this.notes = notes;
    while (r.pos < end) {
      const tag = r.uint32();
      switch (tag) {
        case 0x0a:
          traceId = this.id(end);
          break; // 1 trace_id
        case 0x12:
          spanId = this.id(end);
          break; // 2 span_id
        case 0x22:
          parentSpanId = this.id(end);
          break; // 4 parent_span_id
        case 0x2a: // 5 name
          this.ctx = 'name';
          this.ctxIndex = -1;
          this.attrKey = '';
          name = this.cutString(end);
          break;
        case 0x30:
          kind = r.uint32();
          break; // 6 kind
        case 0x39:
          startTimeNs = this.fixed64(end);
          break; // 7 start_time_unix_nano
        case 0x41:
          endTimeNs = this.fixed64(end);
          break; // 8 end_time_unix_nano
        case 0x4a:
          this.attribute(end, attributes, attrsSent++, 'attributes', -1);
          break; // 9 attributes
        case 0x5a: // 11 events
          if (eventsSent++ < limits.maxEvents) events.push(this.event(this.sub(end), events.length));
          else r.pos = this.sub(end);
          break;
        case 0x6a:
          links.push(this.link(this.sub(end), links.length));
          break; // 13 links
        case 0x7a: // 15 status
          this.status(this.sub(end));
          statusCode = this.statusCode;
          statusMessage = this.statusMessage;
          break;
        default:
          this.skip(tag, end);
      }
    }
    this.done(end);
    if (attrsSent > limits.maxAttributes) addNote(notes, countNote('attributes', attrsSent, limits.maxAttributes));
    if (eventsSent > limits.maxEvents) addNote(notes, countNote('events', eventsSent, limits.maxEvents));
    const problem = idProblem(traceId, spanId, parentSpanId);
    if (problem !== undefined) {
      this.rejected.push({ index, traceId: echoId(traceId), spanId: echoId(spanId), reason: problem });
      return;
    }
    this.spans.push({
      traceId,
      spanId,
      parentSpanId,
      name,
      kind: knownOr0(kind, 5),
      startTimeNs,
      endTimeNs,
      attributes,
      events,
      links,
      statusCode: knownOr0(statusCode, 2),
      statusMessage,
      resource,
      scopeName,
      scopeVersion,
      truncated: notes,
    });
  }

  /** Span.Event: time_unix_nano (1, fixed64), name (2), attributes (3). */
  private event(end: number, i: number): DecodedEvent {
    const r = this.r;
    const attributes: Attributes = {};
    let timeNs = 0n,
      name = '',
      sent = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 0x09) timeNs = this.fixed64(end);
      else if (tag === T_LEN2) name = this.string(end);
      else if (tag === T_LEN3) this.attribute(end, attributes, sent++, 'events', i);
      else this.skip(tag, end);
    }
    this.done(end);
    if (sent > this.limits.maxAttributes) addNote(this.notes, countNote(`events[${i}].attributes`, sent, this.limits.maxAttributes));
    return { name, timeNs, attributes };
  }

  /** Span.Link: trace_id (1), span_id (2), attributes (4). */
  private link(end: number, i: number): DecodedLink {
    const r = this.r;
    const attributes: Attributes = {};
    let traceId = '',
      spanId = '',
      sent = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) traceId = this.id(end);
      else if (tag === T_LEN2) spanId = this.id(end);
      else if (tag === T_LEN4) this.attribute(end, attributes, sent++, 'links', i);
      else this.skip(tag, end);
    }
    this.done(end);
    if (sent > this.limits.maxAttributes) addNote(this.notes, countNote(`links[${i}].attributes`, sent, this.limits.maxAttributes));
    return { traceId, spanId, attributes };
  }

  /** Status: message (2), code (3); field 1 is the reserved deprecated code. */
  private status(end: number): void {
    const r = this.r;
    this.statusCode = 0;
    this.statusMessage = '';
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN2) {
        this.ctx = 'status.message';
        this.ctxIndex = -1;
        this.attrKey = '';
        this.statusMessage = this.cutString(end);
      } else if (tag === 0x18) this.statusCode = r.uint32();
      else this.skip(tag, end);
    }
    this.done(end);
  }
}
