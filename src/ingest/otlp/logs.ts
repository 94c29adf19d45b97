// The shape the OTLP logs decoders (protobuf, OTLP/JSON) produce: one DecodedLogRecord per
// LogRecord, with its resource and scope. Ids are lowercase hex as sent ('' when absent) and are
// checked by the mapper, not the decoder: a log without a span is a valid log, only not one we can
// join to a trace.
import type { AttrValue, Attributes } from '../../executions/span.ts';

export interface DecodedLogRecord {
  /** Position in the request, counting every record of every resource and scope */
  index: number;
  timeNs: bigint;
  observedTimeNs: bigint;
  severityNumber: number;
  severityText: string;
  /** LogRecord.event_name (OTLP 1.5+); '' when absent (older SDKs put it in the `event.name` attribute) */
  eventName: string;
  body: AttrValue;
  attributes: Attributes;
  traceId: string;
  spanId: string;
  resource: Attributes;
  scopeName: string;
  /** What the decoder cut to stay within limits */
  truncated: string[];
}

export interface LogsDecodeResult {
  records: DecodedLogRecord[];
}
