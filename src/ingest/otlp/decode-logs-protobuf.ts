// OTLP/protobuf ExportLogsServiceRequest → DecodedLogRecords, on the same reader as the trace
// decoder (every length checked against its enclosing message; the common messages shared in
// proto-attributes.ts). Field numbers: opentelemetry.proto.logs.v1 (ResourceLogs 1 resource,
// 2 scope_logs; ScopeLogs 1 scope, 2 log_records; LogRecord below).
import { DEFAULT_DECODE_LIMITS, type AttrValue, type Attributes, type DecodeLimits } from '../../executions/span.ts';
import { addNote, countNote } from './validate.ts';
import { AttributeReader, decodeOrRefuse, T_LEN1, T_LEN2 } from './proto-attributes.ts';
import type { DecodedLogRecord, LogsDecodeResult } from './logs.ts';

export function decodeProtobufLogs(body: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): LogsDecodeResult {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const decoder = new LogsRequestDecoder(buf, limits);
  decodeOrRefuse('ExportLogsServiceRequest', () => decoder.request());
  return { records: decoder.records };
}

class LogsRequestDecoder extends AttributeReader {
  readonly records: DecodedLogRecord[] = [];

  request(): void {
    const r = this.r;
    const end = this.buf.length;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) this.resourceLogs(this.sub(end));
      else this.skip(tag, end);
    }
  }

  private resourceLogs(end: number): void {
    const r = this.r;
    const resource: Attributes = {};
    const first = this.records.length;
    const resourceNotes: string[] = [];
    let attrsSent = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) attrsSent += this.resource(this.sub(end), resource, resourceNotes, attrsSent);
      else if (tag === T_LEN2) this.scopeLogs(this.sub(end), resource);
      else this.skip(tag, end);
    }
    this.done(end);
    if (attrsSent > this.limits.maxAttributes)
      addNote(resourceNotes, countNote('resource.attributes', attrsSent, this.limits.maxAttributes));
    if (resourceNotes.length > 0) for (let i = first; i < this.records.length; i++) this.records[i]!.truncated.push(...resourceNotes);
  }

  private scopeLogs(end: number, resource: Attributes): void {
    const r = this.r;
    const first = this.records.length;
    let name = '';
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN2) this.logRecord(this.sub(end), resource);
      else if (tag === T_LEN1) {
        // InstrumentationScope: name (1)
        const stop = this.sub(end);
        name = '';
        while (r.pos < stop) {
          const t = r.uint32();
          if (t === T_LEN1) name = this.string(stop);
          else this.skip(t, stop);
        }
        this.done(stop);
      } else this.skip(tag, end);
    }
    this.done(end);
    for (let i = first; i < this.records.length; i++) this.records[i]!.scopeName = name;
  }

  /**
   * LogRecord: 1 time (fixed64), 2 severity_number, 3 severity_text, 5 body, 6 attributes,
   * 9 trace_id, 10 span_id, 11 observed time, 12 event_name.
   */
  private logRecord(end: number, resource: Attributes): void {
    const r = this.r;
    const notes: string[] = [];
    const attributes: Attributes = {};
    let timeNs = 0n,
      observedTimeNs = 0n,
      severityNumber = 0,
      severityText = '',
      eventName = '',
      traceId = '',
      spanId = '',
      attrsSent = 0;
    let body: AttrValue = null;
    this.notes = notes;
    while (r.pos < end) {
      const tag = r.uint32();
      switch (tag) {
        case 0x09:
          timeNs = this.fixed64(end);
          break;
        case 0x10:
          severityNumber = r.uint32();
          break;
        case 0x1a:
          severityText = this.string(end);
          break;
        case 0x2a: {
          // 5 body (AnyValue)
          const stop = this.sub(end);
          this.ctx = 'body';
          this.ctxIndex = -1;
          this.attrKey = '';
          body = this.anyValue(stop, 0);
          break;
        }
        case 0x32:
          this.attribute(end, attributes, attrsSent++, 'attributes', -1);
          break;
        case 0x4a:
          traceId = this.id(end);
          break;
        case 0x52:
          spanId = this.id(end);
          break;
        case 0x59:
          observedTimeNs = this.fixed64(end);
          break;
        case 0x62:
          eventName = this.string(end);
          break;
        default:
          this.skip(tag, end);
      }
    }
    this.done(end);
    if (attrsSent > this.limits.maxAttributes) addNote(notes, countNote('attributes', attrsSent, this.limits.maxAttributes));
    this.records.push({
      index: this.records.length,
      timeNs,
      observedTimeNs,
      severityNumber: severityNumber > 24 ? 0 : severityNumber,
      severityText,
      eventName,
      body,
      attributes,
      traceId,
      spanId,
      resource,
      scopeName: '',
      truncated: notes,
    });
  }
}
