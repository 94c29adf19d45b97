// The other OTLP signals, sent by the real OpenTelemetry SDKs and exporters: logs (sdk-logs with
// the OTLP/HTTP protobuf, JSON and gRPC log exporters) and metrics (sdk-metrics with the OTLP/HTTP
// metric exporters). An export that fails is recorded and makes `flush` reject, whatever the
// processor does with it (the simple log processor hands failures to the global error handler).
import { context, trace, type SpanContext } from '@opentelemetry/api';
import type { Logger, LogRecord } from '@opentelemetry/api-logs';
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { Metadata } from '@grpc/grpc-js';

export type SignalProtocol = 'proto' | 'json' | 'grpc';

/** An exporter error as text (HTTP status in `code`, body in `data`; gRPC status in `code`, text in `details`). */
export function describeExportError(err: unknown): string {
  if (Array.isArray(err)) return err.map(describeExportError).join('; ');
  const e = err as { message?: string; code?: unknown; data?: unknown; details?: unknown };
  return [
    e?.message ?? String(err),
    e?.code !== undefined ? `code ${String(e.code)}` : '',
    e?.data ? `body ${String(e.data).slice(0, 300)}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

export interface Logging {
  logger: Logger;
  /** Emits a GenAI event as a log record in the context of the span `ctx` names. */
  event(name: string, body: LogRecord['body'], ctx?: SpanContext, attributes?: LogRecord['attributes']): void;
  /** Waits for every export; rejects with the failures when any failed. */
  flush(): Promise<void>;
  /** The raw failures (for tests that expect one). */
  failures: unknown[];
  shutdown(): Promise<void>;
}

export function logging(url: string, opts: { protocol: SignalProtocol; gzip?: boolean; headers?: Record<string, string> }): Logging {
  let exporter: LogRecordExporter;
  if (opts.protocol === 'grpc') {
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(opts.headers ?? {})) metadata.set(k, v);
    exporter = new GrpcLogExporter({ url, metadata, compression: (opts.gzip ? 'gzip' : 'none') as never });
  } else {
    const config = {
      url: `${url}/api/v1/logs`,
      headers: opts.headers ?? {},
      compression: (opts.gzip ? 'gzip' : 'none') as never,
      timeoutMillis: 10_000,
    };
    exporter = opts.protocol === 'proto' ? new ProtoLogExporter(config) : new JsonLogExporter(config);
  }
  const failures: unknown[] = [];
  const inflight = new Set<Promise<void>>();
  const checked: LogRecordExporter = {
    export(records: ReadableLogRecord[], done) {
      let finish!: () => void;
      const p = new Promise<void>((r) => (finish = r));
      inflight.add(p);
      exporter.export(records, (result) => {
        if (result.code !== 0) failures.push(result.error ?? new Error('export failed'));
        done(result);
        inflight.delete(p);
        finish();
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'log-client' }),
    processors: [new SimpleLogRecordProcessor({ exporter: checked })],
  });
  const logger = provider.getLogger('traceloom-test', '1.0.0');
  return {
    logger,
    failures,
    event(name, body, ctx, attributes) {
      const c = ctx ? trace.setSpanContext(context.active(), ctx) : context.active();
      logger.emit({ eventName: name, body, attributes: { 'gen_ai.system': 'openai', ...attributes }, context: c });
    },
    async flush() {
      await provider.forceFlush();
      while (inflight.size > 0) await Promise.all([...inflight]);
      if (failures.length > 0) throw new Error(`OTLP log export failed: ${describeExportError(failures)}`);
    },
    shutdown: () => provider.shutdown(),
  };
}

export interface Metering {
  provider: MeterProvider;
  /** Exports what was recorded; rejects when the export failed. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function metering(url: string, opts: { protocol: 'proto' | 'json'; headers?: Record<string, string> }): Metering {
  const config = { url: `${url}/api/v1/metrics`, headers: opts.headers ?? {}, timeoutMillis: 10_000 };
  const exporter = opts.protocol === 'proto' ? new ProtoMetricExporter(config) : new JsonMetricExporter(config);
  // A long interval: only forceFlush exports, so the test decides when.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, exportTimeoutMillis: 10_000 });
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'metric-client' }), readers: [reader] });
  return { provider, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}
