// OTLP/JSON ExportLogsServiceRequest (`resourceLogs`) → DecodedLogRecords, as lenient as the trace
// decoder about what real senders do (snake_case keys, uppercase hex, base64 ids, int64 as number
// or string). Only a document that is not a logs request is a 400; a record with unreadable ids
// keeps '' ids (the mapper says why it cannot be joined).
import { badRequest } from '../../errors.ts';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits } from '../../executions/span.ts';
import { hexId, isObj, JsonAttributeReader, nsFrom, pick, str } from './json-attributes.ts';
import type { DecodedLogRecord, LogsDecodeResult } from './logs.ts';

const EXPECTED = 'Request body must be an OTLP/JSON ExportLogsServiceRequest ({"resourceLogs":[...]})';

export function decodeJsonLogs(doc: unknown, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): LogsDecodeResult {
  if (!isObj(doc)) throw badRequest(EXPECTED);
  const resourceLogs = pick(doc, 'resourceLogs', 'resource_logs');
  if (resourceLogs === undefined || resourceLogs === null) {
    if (Object.keys(doc).length > 0) throw badRequest(EXPECTED); // `{}` is an empty request
    return { records: [] };
  }
  if (!Array.isArray(resourceLogs)) throw badRequest('resourceLogs: must be an array');
  const d = new JsonLogsDecoder(limits);
  resourceLogs.forEach((rl, i) => d.resourceLogs(rl, `resourceLogs[${i}]`));
  return { records: d.records };
}

class JsonLogsDecoder extends JsonAttributeReader {
  readonly records: DecodedLogRecord[] = [];

  resourceLogs(rl: unknown, at: string): void {
    if (!isObj(rl)) throw badRequest(`${at}: must be an object`);
    const resourceNotes: string[] = [];
    const resource = isObj(rl.resource) ? this.attributes(rl.resource.attributes, resourceNotes, 'resource.attributes') : {};
    const scopeLogs = pick(rl, 'scopeLogs', 'scope_logs') ?? [];
    if (!Array.isArray(scopeLogs)) throw badRequest(`${at}.scopeLogs: must be an array`);
    scopeLogs.forEach((sl: unknown, j) => {
      if (!isObj(sl)) throw badRequest(`${at}.scopeLogs[${j}]: must be an object`);
      const scopeName = isObj(sl.scope) ? str(sl.scope.name) : '';
      const records = pick(sl, 'logRecords', 'log_records') ?? [];
      if (!Array.isArray(records)) throw badRequest(`${at}.scopeLogs[${j}].logRecords: must be an array`);
      for (const rec of records) this.record(rec, resource, resourceNotes, scopeName);
    });
  }

  private record(rec: unknown, resource: DecodedLogRecord['resource'], resourceNotes: string[], scopeName: string): void {
    const index = this.records.length;
    const notes: string[] = [];
    if (!isObj(rec)) {
      this.records.push({
        index,
        timeNs: 0n,
        observedTimeNs: 0n,
        severityNumber: 0,
        severityText: '',
        eventName: '',
        body: null,
        attributes: {},
        traceId: '',
        spanId: '',
        resource,
        scopeName,
        truncated: ['log record: not an object'],
      });
      return;
    }
    this.notes = notes;
    this.ctx = 'body';
    this.attrKey = '';
    const body = rec.body === undefined ? null : this.anyValue(rec.body, 0);
    const attributes = this.attributes(rec.attributes, notes, 'attributes');
    const severity = Number(pick(rec, 'severityNumber', 'severity_number') ?? 0);
    if (resourceNotes.length > 0) notes.push(...resourceNotes);
    this.records.push({
      index,
      timeNs: nsFrom(pick(rec, 'timeUnixNano', 'time_unix_nano')) ?? 0n,
      observedTimeNs: nsFrom(pick(rec, 'observedTimeUnixNano', 'observed_time_unix_nano')) ?? 0n,
      severityNumber: Number.isInteger(severity) && severity >= 0 && severity <= 24 ? severity : 0,
      severityText: str(pick(rec, 'severityText', 'severity_text')),
      eventName: str(pick(rec, 'eventName', 'event_name')),
      body,
      attributes,
      traceId: hexId(pick(rec, 'traceId', 'trace_id'), 16) ?? '',
      spanId: hexId(pick(rec, 'spanId', 'span_id'), 8) ?? '',
      resource,
      scopeName,
      truncated: notes,
    });
  }
}
