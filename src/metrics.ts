// The service's own metrics, in Prometheus text format at GET /metrics: one registry per service
// (not prom-client's global one, so several services in one process — tests — keep theirs apart).
// Counters are bumped where things happen; gauges read the live state when scraped.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface GaugeSources {
  /** Ingest log: rows and bytes appended and not yet loaded, records waiting, segment files. */
  ingestQueue(): { rows: number; bytes: number; records: number; segments: number; oldestWaitingMs: number };
  /** Ingest log records set aside as dead letters and still kept (not replayed, not purged). */
  deadLetters(): { records: number; bytes: number };
  /** The earliest due time among traces waiting for assembly (ms), or undefined. */
  assemblyNextDue(): Promise<number | undefined>;
  /** Each store: up or down. */
  storeHealth(): Promise<Record<string, 'ok' | 'down' | 'disabled'>>;
}

export function createMetrics() {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'traceloom' });
  collectDefaultMetrics({ register: registry, prefix: 'traceloom_process_' });

  const httpRequests = new Counter({
    name: 'traceloom_http_requests_total',
    help: 'HTTP requests answered, by method, route (the route pattern, not the path) and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'traceloom_http_request_duration_seconds',
    help: 'HTTP request latency, by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const spansAccepted = new Counter({
    name: 'traceloom_ingest_spans_accepted_total',
    help: 'Spans made durable (answered 200)',
    registers: [registry],
  });
  const spansRejected = new Counter({
    name: 'traceloom_ingest_spans_rejected_total',
    help: 'Spans rejected as invalid (partial success)',
    registers: [registry],
  });
  const ingestRefused = new Counter({
    name: 'traceloom_ingest_refused_total',
    help: 'Ingest requests refused before anything was made durable, by reason (queue_full and log_write answer 503, too_large 413)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const rowsWritten = new Counter({
    name: 'traceloom_rows_written_total',
    help: 'Rows written to ClickHouse by the ingest loader and trace assembly, by table',
    labelNames: ['table'] as const,
    registers: [registry],
  });
  const executionsAssembled = new Counter({
    name: 'traceloom_executions_assembled_total',
    help: "Executions written by trace assembly: from the request's own spans (request) or from spans read back (read_back)",
    labelNames: ['path'] as const,
    registers: [registry],
  });
  const loadFailures = new Counter({
    name: 'traceloom_ingest_load_failures_total',
    help: 'Ingest log batches that failed to load (retried)',
    registers: [registry],
  });
  const deadLettered = new Counter({
    name: 'traceloom_ingest_dead_lettered_total',
    help: 'Ingest log records set aside as dead letters (they failed alone while the stores answered)',
    registers: [registry],
  });
  const logRecords = new Counter({
    name: 'traceloom_ingest_log_records_total',
    help: 'OTLP log records received: GenAI events joined to their spans (mapped) or accepted and not kept (ignored)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const metricPointsIgnored = new Counter({
    name: 'traceloom_ingest_metric_points_ignored_total',
    help: 'OTLP metric data points received and not stored (answered as a success)',
    registers: [registry],
  });
  const grpcRequests = new Counter({
    name: 'traceloom_grpc_requests_total',
    help: 'OTLP/gRPC export calls answered, by method and gRPC status code name',
    labelNames: ['method', 'code'] as const,
    registers: [registry],
  });
  const budgetEvaluations = new Counter({
    name: 'traceloom_budget_evaluations_total',
    help: 'Budget evaluations of a project (month-to-date spend against its budget), by resulting status (ok, alert, exceeded) or failed',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const budgetAlerts = new Counter({
    name: 'traceloom_budget_alerts_fired_total',
    help: 'Budget alerts fired (once per project, month and kind)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const alertDeliveries = new Counter({
    name: 'traceloom_budget_alert_deliveries_total',
    help: 'Budget alert webhook delivery attempts, by outcome (delivered, failed: retried with backoff)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  let sources: GaugeSources | undefined;
  new Gauge({
    name: 'traceloom_ingest_queue_rows',
    help: 'Rows acknowledged (durable in the ingest log) and not yet loaded into ClickHouse',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.ingestQueue().rows);
    },
  });
  new Gauge({
    name: 'traceloom_ingest_queue_bytes',
    help: 'Bytes of ingest log records not yet loaded into ClickHouse',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.ingestQueue().bytes);
    },
  });
  new Gauge({
    name: 'traceloom_ingest_log_segments',
    help: 'Segment files of the ingest log on disk (records not yet loaded, and the segment being written)',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.ingestQueue().segments);
    },
  });
  new Gauge({
    name: 'traceloom_ingest_load_lag_seconds',
    help: 'How long the oldest acknowledged record not yet loaded has waited',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.ingestQueue().oldestWaitingMs / 1000);
    },
  });
  new Gauge({
    name: 'traceloom_ingest_dead_letters',
    help: 'Dead letters kept beside the ingest log, waiting to be replayed or purged',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.deadLetters().records);
    },
  });
  new Gauge({
    name: 'traceloom_ingest_dead_letter_bytes',
    help: 'Bytes of the dead letters kept beside the ingest log',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.deadLetters().bytes);
    },
  });
  new Gauge({
    name: 'traceloom_assembly_lag_seconds',
    help: 'How far past its due time the most overdue trace waiting for assembly is (0 when none is overdue)',
    registers: [registry],
    async collect() {
      if (!sources) return;
      const next = await sources.assemblyNextDue().catch(() => undefined);
      this.set(next === undefined ? 0 : Math.max(0, Date.now() - next) / 1000);
    },
  });
  new Gauge({
    name: 'traceloom_store_up',
    help: 'Whether each store answers (1) or not (0); stores not configured are left out',
    labelNames: ['store'] as const,
    registers: [registry],
    async collect() {
      if (!sources) return;
      this.reset();
      for (const [store, status] of Object.entries(await sources.storeHealth()))
        if (status !== 'disabled') this.set({ store }, status === 'ok' ? 1 : 0);
    },
  });

  return {
    registry,
    httpRequests,
    httpDuration,
    spansAccepted,
    spansRejected,
    ingestRefused,
    rowsWritten,
    executionsAssembled,
    loadFailures,
    deadLettered,
    logRecords,
    metricPointsIgnored,
    grpcRequests,
    budgetEvaluations,
    budgetAlerts,
    alertDeliveries,
    /** Where the gauges read their values (set once the domain exists). */
    setSources(s: GaugeSources): void {
      sources = s;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
