// POST /api/v1/traces (docs/traces.md): OTLP/HTTP protobuf, OTLP/JSON and the flat JSON form,
// gzip or deflate, into the caller's project. Body limits are checked before and while inflating.
// Answers JSON counts to JSON requests (or Accept: application/json, or ?explain=true), and a
// protobuf ExportTraceServiceResponse to protobuf requests, with partial_success when spans were
// rejected. OTLP exporters retry 429/503 with Retry-After; an ingest log that is behind or full
// answers 503 before anything is written (behind: before the body is even read).
import type { Config } from '../../config.ts';
import type { TraceIngest } from '../../ingest/traces.ts';
import { apiKeyIdOf } from '../../auth/principal.ts';
import { answerOtlp, ingestProject, readOtlpBody } from './otlp-request.ts';
import type { RouteDef } from './types.ts';

export function traceRoutes(config: Config, ingest: TraceIngest): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/traces',
      operationId: 'ingestTraces',
      tag: 'traces',
      access: 'authenticated',
      need: 'write',
      ingest: true,
      query: 'TraceIngestQuery',
      summary: 'Ingest OpenTelemetry spans (OTLP/HTTP protobuf or JSON, or the flat JSON form)',
      rawBody: {
        description:
          'An OTLP ExportTraceServiceRequest (application/x-protobuf), OTLP/JSON (`resourceSpans`), ' +
          'or the flat form `{"spans":[...]}` (application/json). ' +
          "Content-Encoding gzip or deflate. The project is the API key's, or the one `X-Project-Id` names among a token's projects.",
        contentTypes: { 'application/x-protobuf': undefined, 'application/json': undefined },
      },
      responses: {
        200: {
          description:
            'Stored. JSON requests get counts; ' +
            'protobuf requests get an ExportTraceServiceResponse (partial_success when spans were rejected)',
          schema: 'TraceIngestResult',
        },
        400: { description: 'Not a valid request, or no valid span in it', schema: 'Error' },
        413: { description: 'Body over MAX_BODY_BYTES, or over MAX_INFLATED_BYTES once inflated', schema: 'Error' },
        415: { description: 'Content-Type or Content-Encoding not supported', schema: 'Error' },
        503: {
          description:
            'Ingest behind (spans accepted now would wait more than INGEST_LOG_MAX_LAG_MS to be stored; refused before the body is read), ' +
            'write queue full, or the ingest log cannot be written: nothing was written; retry after Retry-After',
          schema: 'Error',
        },
      },
      async handler(ctx) {
        const projectId = ingestProject(ctx);
        ingest.admit();
        const req = await readOtlpBody(ctx, config);
        const explain = (ctx.state.query as { explain: boolean }).explain;
        const result = await ingest.ingest(
          projectId,
          { format: req.isProtobuf ? 'protobuf' : 'json', body: req.body },
          {
            explain,
            apiKeyId: apiKeyIdOf(ctx.state.principal),
          },
        );
        answerOtlp(ctx, req, explain, result, result.spans_rejected, result.errors.join('; '));
      },
    },
  ];
}
