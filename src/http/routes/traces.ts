// POST /api/v1/traces (api.md part 4): OTLP/HTTP protobuf, OTLP/JSON and the flat JSON form,
// gzip or deflate, into the caller's project. Body limits are checked before and while inflating.
// Answers JSON counts to JSON requests (or Accept: application/json, or ?explain=true), and a
// protobuf ExportTraceServiceResponse to protobuf requests, with partial_success when spans were
// rejected. OTLP exporters retry 429/503 with Retry-After; a full write queue answers 503 before
// anything is written.
import type { Config } from '../../config.ts';
import type { TraceIngest } from '../../ingest/traces.ts';
import { decodeProtobufTraces } from '../../ingest/otlp/decode-protobuf.ts';
import { decodeJsonTraces } from '../../ingest/otlp/decode-json.ts';
import { encodeExportTraceServiceResponse } from '../../ingest/otlp/response.ts';
import { inflateBody } from '../../ingest/otlp/inflate.ts';
import { allows } from '../../auth/principal.ts';
import { badRequest, forbidden, unsupportedMediaType } from '../errors.ts';
import { readRaw } from '../body.ts';
import type { RouteContext, RouteDef } from './types.ts';

const PROTOBUF = ['application/x-protobuf', 'application/protobuf'];

/** The project of an ingest request: the caller's, or the one X-Project-Id picks among several. */
function ingestProject(ctx: RouteContext): string {
  const p = ctx.state.principal!;
  const asked = ctx.get('X-Project-Id');
  const projectId = asked || p.projectId;
  if (!projectId) throw badRequest('X-Project-Id: the credential names several projects or none; say which project the spans belong to');
  const role = p.projects.get(projectId);
  if (!role || !allows(role, 'write')) throw forbidden();
  return projectId;
}

export function traceRoutes(config: Config, ingest: TraceIngest): RouteDef[] {
  return [
    {
      method: 'POST', path: '/api/v1/traces', operationId: 'ingestTraces', tag: 'traces', access: 'authenticated', need: 'write', ingest: true,
      query: 'TraceIngestQuery',
      summary: 'Ingest OpenTelemetry spans (OTLP/HTTP protobuf or JSON, or the flat JSON form)',
      rawBody: {
        description:
          'An OTLP ExportTraceServiceRequest (application/x-protobuf), OTLP/JSON (`resourceSpans`), or the flat form `{"spans":[...]}` (application/json). ' +
          'Content-Encoding gzip or deflate. The project is the API key\'s, or the one `X-Project-Id` names among a token\'s projects.',
        contentTypes: { 'application/x-protobuf': undefined, 'application/json': undefined },
      },
      responses: {
        200: { description: 'Stored. JSON requests get counts; protobuf requests get an ExportTraceServiceResponse (partial_success when spans were rejected)', schema: 'TraceIngestResult' },
        400: { description: 'Not a valid request, or no valid span in it', schema: 'Error' },
        413: { description: 'Body over MAX_BODY_BYTES, or over MAX_INFLATED_BYTES once inflated', schema: 'Error' },
        415: { description: 'Content-Type or Content-Encoding not supported', schema: 'Error' },
        503: { description: 'Write queue full or ClickHouse unavailable: nothing was written; retry after Retry-After', schema: 'Error' },
      },
      async handler(ctx) {
        const projectId = ingestProject(ctx);
        const type = (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
        const isProtobuf = PROTOBUF.includes(type);
        const isJson = type === 'application/json' || type.endsWith('+json');
        if (!isProtobuf && !isJson) throw unsupportedMediaType(ctx.get('Content-Type') || undefined, 'application/x-protobuf or application/json');
        const raw = await readRaw(ctx, config.limits.maxBodyBytes);
        const body = await inflateBody(raw, ctx.get('Content-Encoding') || undefined, config.limits.maxInflatedBytes);
        let decoded;
        if (isProtobuf) {
          decoded = decodeProtobufTraces(body);
        } else {
          let doc: unknown;
          try {
            doc = JSON.parse(body.toString('utf8'));
          } catch (err) {
            throw badRequest(`Request body is not valid JSON: ${(err as Error).message}`);
          }
          decoded = decodeJsonTraces(doc);
        }
        const explain = (ctx.state.query as { explain: boolean }).explain;
        const result = await ingest.ingest(projectId, decoded, { explain });
        ctx.status = 200;
        if (isJson || explain || /application\/json/i.test(ctx.get('Accept'))) {
          ctx.body = result;
          return;
        }
        ctx.type = 'application/x-protobuf';
        ctx.body = Buffer.from(encodeExportTraceServiceResponse(result.spans_rejected, result.errors.join('; ')));
      },
    },
  ];
}
