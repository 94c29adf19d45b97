// OTLP/gRPC on OTLP_GRPC_PORT (default 4317; 0: off), bound to HOST: TraceService, LogsService and
// MetricsService Export, for collectors and SDKs that speak gRPC only (Phoenix's default is gRPC on
// 4317). The same service as OTLP/HTTP: the credential from metadata `x-api-key` or
// `authorization` through the same identity code, the project from `x-project-id` or the
// credential, the same decoders and ingest functions, the same limits (one gRPC message may be
// MAX_INFLATED_BYTES, checked by grpc-js before and while inflating a compressed one), and our
// errors as gRPC statuses (status.ts). Messages are passed through as bytes: our own decoders
// read them, as they read the HTTP bodies.
import { Server, ServerCredentials, status as Code, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Identity } from '../auth/identity.ts';
import type { Domain } from '../compose/domain.ts';
import { apiKeyIdOf, ingestProjectOf } from '../auth/principal.ts';
import { decodeProtobufLogs } from '../ingest/otlp/decode-logs-protobuf.ts';
import { countProtobufMetricPoints } from '../ingest/otlp/metric-points.ts';
import { encodeExportResponse } from '../ingest/otlp/response.ts';
import { toGrpcStatus } from './status.ts';

const bytes = (b: Buffer) => b;

function exportService(service: string): ServiceDefinition {
  return {
    Export: {
      path: `/opentelemetry.proto.collector.${service}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      responseDeserialize: bytes,
      originalName: 'export',
    },
  } as ServiceDefinition;
}

export interface OtlpGrpcServer {
  readonly port: number;
  /** Stops taking calls, lets those in flight finish (up to `graceMs`), then closes what is left. */
  close(graceMs: number): Promise<void>;
}

export async function startOtlpGrpc(deps: { config: Config; identity: Identity; domain: Domain; logger: Logger }): Promise<OtlpGrpcServer> {
  const { config, identity, domain, logger } = deps;
  const server = new Server({
    'grpc.max_receive_message_length': config.limits.maxInflatedBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });

  /** One Export call: authenticate, choose the project, run `work` on the request bytes, answer its response bytes. */
  const unary =
    (method: string, work: (projectId: string, body: Buffer, apiKeyId: string) => Promise<Uint8Array>) =>
    (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
      const md = call.metadata;
      const first = (key: string) => {
        const v = md.get(key)[0];
        return typeof v === 'string' && v !== '' ? v : undefined;
      };
      (async () => {
        const principal = await identity.authenticate({ apiKey: first('x-api-key'), authorization: first('authorization') });
        const projectId = ingestProjectOf(principal, first('x-project-id'));
        return work(projectId, call.request, apiKeyIdOf(principal));
      })().then(
        (response) => {
          domain.metrics.grpcRequests.inc({ method, code: Code[Code.OK] });
          callback(null, Buffer.from(response));
        },
        (err: unknown) => {
          const s = toGrpcStatus(err, (e) => logger.error({ method, err: e }, 'OTLP/gRPC call failed'));
          domain.metrics.grpcRequests.inc({ method, code: Code[s.code] });
          callback(s);
        },
      );
    };

  server.addService(exportService('trace.v1.TraceService'), {
    Export: unary('TraceService/Export', async (projectId, body, apiKeyId) => {
      domain.traces.ingest.admit();
      const r = await domain.traces.ingest.ingest(projectId, { format: 'protobuf', body }, { apiKeyId });
      return encodeExportResponse(r.spans_rejected, r.errors.join('; '));
    }),
  });
  server.addService(exportService('logs.v1.LogsService'), {
    Export: unary('LogsService/Export', async (projectId, body, apiKeyId) => {
      await domain.logs.ingest.ingest(projectId, decodeProtobufLogs(body), { apiKeyId });
      return encodeExportResponse(0, '');
    }),
  });
  server.addService(exportService('metrics.v1.MetricsService'), {
    Export: unary('MetricsService/Export', async (_projectId, body) => {
      domain.metrics.metricPointsIgnored.inc(countProtobufMetricPoints(body));
      return encodeExportResponse(0, '');
    }),
  });

  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${config.otlpGrpcPort}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  logger.info({ port }, 'OTLP/gRPC listening');

  let closing: Promise<void> | undefined;
  return {
    port,
    close: (graceMs) =>
      (closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      })),
  };
}
