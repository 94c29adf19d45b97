// ExportTraceServiceResponse, protobuf and OTLP/JSON. Full success is an empty message (zero bytes,
// `{}`): `partial_success` is set only when spans were rejected or there is a warning to pass on.
// ExportLogsServiceResponse and ExportMetricsServiceResponse have the same wire shape (partial
// success 1 { rejected_log_records / rejected_data_points 1, error_message 2 }): one encoder.
import protobuf from 'protobufjs/minimal.js';

export function encodeExportResponse(rejectedSpans: number, errorMessage: string): Uint8Array {
  if (!(rejectedSpans > 0) && errorMessage === '') return new Uint8Array(0);
  const w = protobuf.Writer.create();
  w.uint32(0x0a).fork(); // 1 partial_success (ExportTracePartialSuccess)
  if (rejectedSpans > 0) w.uint32(0x08).int64(rejectedSpans); // 1 rejected_spans (int64)
  if (errorMessage !== '') w.uint32(0x12).string(errorMessage); // 2 error_message
  w.ldelim();
  return w.finish();
}

export interface ExportTraceServiceResponseJson {
  partialSuccess?: { rejectedSpans: string; errorMessage: string };
}

/** The OTLP/JSON form: int64 as a decimal string, per the protobuf JSON mapping. */
export function exportTraceServiceResponseJson(rejectedSpans: number, errorMessage: string): ExportTraceServiceResponseJson {
  if (!(rejectedSpans > 0) && errorMessage === '') return {};
  return { partialSuccess: { rejectedSpans: String(Math.max(0, Math.trunc(rejectedSpans))), errorMessage } };
}
