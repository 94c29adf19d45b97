// POST /api/v1/logs and /api/v1/metrics: the other two OTLP/HTTP signals, which SDKs configured
// with OTEL_EXPORTER_OTLP_ENDPOINT send beside traces. Same encodings, compression, limits, auth
// and project choice as /api/v1/traces (otlp-request.ts). Logs: GenAI events are joined to their
// spans, other records accepted and counted as ignored (`?explain=true` says per record why).
// Metrics: read, counted and not stored; the answer is a clean success so exporters stop erroring.
import type { Config } from '../../config.ts';
import type { LogIngest } from '../../ingest/logs.ts';
import type { Metrics } from '../../metrics.ts';
import { decodeProtobufLogs } from '../../ingest/otlp/decode-logs-protobuf.ts';
import { decodeJsonLogs } from '../../ingest/otlp/decode-logs-json.ts';
import { countJsonMetricPoints, countProtobufMetricPoints } from '../../ingest/otlp/metric-points.ts';
import { apiKeyIdOf } from '../../auth/principal.ts';
import { answerOtlp, ingestProject, readOtlpBody } from './otlp-request.ts';
import type { ResponseDef, RouteDef } from './types.ts';

const errors = (what: string): Record<number, ResponseDef> => ({
  400: { description: `Not a valid ${what}`, schema: 'Error' },
  413: { description: 'Body over MAX_BODY_BYTES, or over MAX_INFLATED_BYTES once inflated', schema: 'Error' },
  415: { description: 'Content-Type or Content-Encoding not supported', schema: 'Error' },
});

export function otlpSignalRoutes(config: Config, logs: LogIngest, metrics: Pick<Metrics, 'metricPointsIgnored'>): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/logs',
      operationId: 'ingestLogs',
      tag: 'traces',
      access: 'authenticated',
      need: 'write',
      ingest: true,
      query: 'TraceIngestQuery',
      summary:
        'Ingest OpenTelemetry logs: GenAI events (gen_ai.user.message, gen_ai.choice, ...) ' +
        "join their spans' messages; other logs are ignored",
      rawBody: {
        description:
          'An OTLP ExportLogsServiceRequest (application/x-protobuf) or OTLP/JSON (`resourceLogs`, application/json), ' +
          'Content-Encoding gzip or deflate. ' +
          'A record whose event name (`event_name`, or the `event.name` attribute) is a GenAI message event and that names its trace and span ' +
          "joins that span's messages in the execution's timeline, whichever arrives first.",
        contentTypes: { 'application/x-protobuf': undefined, 'application/json': undefined },
      },
      responses: {
        200: {
          description:
            'Accepted. JSON requests get counts (and the per-record explanation with ?explain=true); ' +
            'protobuf requests an empty ExportLogsServiceResponse',
          schema: 'LogIngestResult',
        },
        ...errors('OTLP logs request'),
        503: { description: 'Write queue full or ClickHouse unavailable: retry after Retry-After', schema: 'Error' },
      },
      async handler(ctx) {
        const projectId = ingestProject(ctx);
        const req = await readOtlpBody(ctx, config);
        const decoded = req.isProtobuf ? decodeProtobufLogs(req.body) : decodeJsonLogs(req.json());
        const explain = (ctx.state.query as { explain: boolean }).explain;
        answerOtlp(ctx, req, explain, await logs.ingest(projectId, decoded, { explain, apiKeyId: apiKeyIdOf(ctx.state.principal) }));
      },
    },
    {
      method: 'POST',
      path: '/api/v1/metrics',
      operationId: 'ingestMetrics',
      tag: 'traces',
      access: 'authenticated',
      need: 'write',
      ingest: true,
      summary: 'Accept OpenTelemetry metrics without storing them (counted as ignored), so SDKs that export every signal do not error',
      rawBody: {
        description:
          'An OTLP ExportMetricsServiceRequest (application/x-protobuf) or OTLP/JSON (`resourceMetrics`, application/json), ' +
          'Content-Encoding gzip or deflate.',
        contentTypes: { 'application/x-protobuf': undefined, 'application/json': undefined },
      },
      responses: {
        200: {
          description:
            'Read and ignored. JSON requests get the count; ' + 'protobuf requests an empty ExportMetricsServiceResponse (full success)',
          schema: 'MetricIngestResult',
        },
        ...errors('OTLP metrics request'),
      },
      async handler(ctx) {
        ingestProject(ctx); // the same access as the other signals, though nothing is written
        const req = await readOtlpBody(ctx, config);
        const points = req.isProtobuf ? countProtobufMetricPoints(req.body) : countJsonMetricPoints(req.json());
        metrics.metricPointsIgnored.inc(points);
        answerOtlp(ctx, req, false, { data_points_ignored: points });
      },
    },
  ];
}
