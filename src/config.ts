// The environment, parsed once into a typed and validated config (the table in README.md, "Configuration").
// This is the only module that reads process.env; everything else receives a Config.
import path from 'node:path';
import {
  bool,
  clickhouseTopology,
  ConfigError,
  exportS3,
  identifier,
  initProject,
  int,
  secretsKey,
  str,
  url,
  type Env,
} from './config-readers.ts';

export { ConfigError } from './config-readers.ts';

export interface Config {
  readonly nodeEnv: string;
  readonly host: string;
  readonly port: number;
  /** OTLP/gRPC (TraceService, LogsService, MetricsService) on HOST at this port; 0: off */
  readonly otlpGrpcPort: number;
  readonly dataDir: string;
  /**
   * Bytes kept free on the filesystems of DATA_DIR and INGEST_LOG_DIR for the stores (PGlite's
   * files when embedded): the ingest log refuses records that would go under it, and /api/health
   * is degraded while free space is under it. 0: no floor.
   */
  readonly diskMinFreeBytes: number;
  /** Where embedded chDB keeps its data (default DATA_DIR/clickhouse). chDB binds one directory per process. */
  readonly chdbDir: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly clickhouse: {
    /** undefined: embedded chDB in `${dataDir}/clickhouse` */
    readonly url: string | undefined;
    readonly user: string | undefined;
    readonly password: string | undefined;
    readonly database: string;
    /**
     * How the migrations are rendered and the queries sent (src/stores/topology.ts): `single` (one
     * node, the embedded engine), `cluster` (replicated local tables behind Distributed ones, on
     * CLICKHOUSE_CLUSTER) or `cloud` (ClickHouse Cloud: no ON CLUSTER, no Replicated engine names).
     */
    readonly topology: 'single' | 'cluster' | 'cloud';
    /** The cluster of the `cluster` topology (its name in remote_servers); undefined otherwise. */
    readonly cluster: string | undefined;
    /** Where dashboards and exports read (a replica, a read-only compute group); undefined: CLICKHOUSE_URL. */
    readonly readUrl: string | undefined;
  };
  /** undefined: embedded PGlite in `${dataDir}/postgres` */
  readonly databaseUrl: string | undefined;
  /** undefined: jobs run in-process, caches are local */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key and queue name, so several deployments can share one Redis */
  readonly redisPrefix: string;
  /** Whether the API process also runs job processors (with Redis, `npm run worker` can take them all) */
  readonly jobsInApi: boolean;
  readonly authRequired: boolean;
  /**
   * A project (and optionally its first admin key) the API makes sure of at every start, from
   * TRACELOOM_INIT_*: the first admin without an identity provider, with the API running.
   */
  readonly init:
    | {
        readonly projectId: string;
        /** undefined: the project's name is left as it is (its id for a new project) */
        readonly projectName: string | undefined;
        /** An operator-chosen `tl_` key, stored hashed with the admin role (never logged) */
        readonly apiKey: string | undefined;
      }
    | undefined;
  /** When set, GET /metrics asks for `Authorization: Bearer <token>` */
  readonly metricsToken: string | undefined;
  readonly idp: {
    readonly jwtIssuer: string | undefined;
    readonly jwksUrl: string | undefined;
    readonly jwtAudience: string | undefined;
    readonly projectClaim: string;
    readonly roleClaim: string;
    /** After a successful JWKS fetch, how long before an unknown `kid` may trigger another (protects the IdP) */
    readonly jwksCooldownMs: number;
  };
  readonly limits: {
    /** JSON request bodies of the API (not OTLP ingest) */
    readonly maxJsonBytes: number;
    /** ingest bodies as sent (compressed) */
    readonly maxBodyBytes: number;
    /** ingest bodies after inflation */
    readonly maxInflatedBytes: number;
    /** an invoice (a provider's cost export) imported in one request (docs/spend.md, "Invoices and reconciliation") */
    readonly maxInvoiceBytes: number;
  };
  /** Ingest: the batching writers (executions, span log events, scores), the ingest log and its loader, span bounds */
  readonly ingest: {
    readonly maxQueueRows: number;
    readonly maxQueueBytes: number;
    readonly batchRows: number;
    readonly flushMs: number;
    readonly attempts: number;
    /** The ingest log (the durable point of OTLP ingest): its folder, segment size, and the bytes one load takes at most */
    readonly logDir: string;
    readonly logSegmentBytes: number;
    /** Acknowledged and not yet loaded (on disk), beyond which ingest answers 503; and how much of it is kept in memory */
    readonly logMaxRows: number;
    readonly logMaxBytes: number;
    readonly logMemoryBytes: number;
    /** While spans accepted now would wait longer than this (ms) to be loaded, ingest answers 503 (0: no bound) */
    readonly logMaxLagMs: number;
    readonly loadBatchBytes: number;
    /** A load starts once this many rows wait, or the oldest has waited `loadIntervalMs` */
    readonly loadBatchRows: number;
    readonly loadIntervalMs: number;
    /**
     * Accepted start times of spans and direct records: from this many days before now to this many
     * days after (a span outside is rejected, an OTLP partial success; a direct record is a 400)
     */
    readonly spanMaxAgeDays: number;
    readonly spanMaxFutureDays: number;
    /** Worker threads that decode, map and encode OTLP trace exports (0: on the thread that received them) */
    readonly workers: number;
  };
  /** Trace assembly: spans of a trace → its execution */
  readonly traces: {
    /** a trace is assembled this long after spans of it were stored (later spans in the window join the same run) */
    readonly debounceMs: number;
    /** a trace whose root span never arrives is finalised after this long without new spans */
    readonly quietMs: number;
  };
  /** Scores (docs/scores.md, "Storage") */
  readonly scores: {
    /**
     * the scores of a trace whose execution was just written, or unknown when they were, are
     * stamped again with its dimensions this long after (firstMs: 0, at once in the background),
     * then once more (againMs), which finds a score and an execution written at the same moment
     */
    readonly stampTiming: { readonly firstMs: number; readonly againMs: number };
    /** how often the stamp sweep looks for scores whose restamp was lost (src/scores/stamp-sweep.ts) */
    readonly stampSweepMs: number;
    /** at start, the sweep also restamps the traces whose executions were written this long before */
    readonly stampSweepLookbackMs: number;
  };
  /** Budgets, alerts and retention (docs/spend.md) */
  readonly spend: {
    /** how often every budget is evaluated (a job scheduler) */
    readonly budgetEvalIntervalMs: number;
    /** after ingest moves a project's spend, its evaluation runs this much later (debounced per project) */
    readonly budgetEvalDebounceMs: number;
    /** how long a node serves a budget check from its own memory before reading Redis again */
    readonly budgetCheckCacheMs: number;
    readonly webhookTimeoutMs: number;
    readonly webhookAttempts: number;
    /** first retry delay of a webhook delivery; doubles at each attempt */
    readonly webhookBackoffMs: number;
    /** whether webhooks may target loopback, private and link-local addresses (SSRF guard; off by default) */
    readonly webhookAllowPrivate: boolean;
    /** how often the retention job applies the projects' retention settings */
    readonly retentionIntervalMs: number;
  };
  /** Scheduled Parquet exports of each day's executions (docs/executions.md); off when neither target is set */
  readonly exports: {
    /** a local (or mounted) directory to write them to */
    readonly dir: string | undefined;
    /** an S3-compatible bucket to PUT them in (signature v4) */
    readonly s3:
      | {
          readonly endpoint: string;
          readonly bucket: string;
          readonly region: string;
          readonly accessKeyId: string;
          readonly secretAccessKey: string;
          readonly prefix: string;
        }
      | undefined;
    /** how often the export job looks for days to export */
    readonly intervalMs: number;
    /** a day is exported this long after its end (late data, traces still being assembled) */
    readonly delayMs: number;
    /** days missed (the service was down) are exported for this many days back */
    readonly catchUpDays: number;
  };
  /** Monitors (docs/monitors.md) */
  readonly monitors: {
    /** how often the due monitors are evaluated (a job scheduler; each monitor's own interval_minutes says when it is due) */
    readonly intervalMs: number;
    /** monitors claimed at once by one worker (they are skipped, not waited for, by the others) */
    readonly claimBatch: number;
    /** batches one tick evaluates at most (the rest wait for the next tick) */
    readonly maxRounds: number;
    /** monitors one project may have (a create past it is a 409; the list shows them all) */
    readonly maxPerProject: number;
  };
  /** LLM-as-judge evaluators (docs/evaluators.md) */
  readonly evaluators: {
    /**
     * SECRETS_KEY: the 32-byte AES-256-GCM key that seals model connections' API keys (64 hex
     * digits or base64). undefined: embedded stores derive one into DATA_DIR/secrets.key; with
     * server stores, creating a connection is refused until it is set.
     */
    readonly secretsKey: Buffer | undefined;
    /** whether connections may target loopback, private and link-local addresses (SSRF guard; off by default) */
    readonly allowPrivate: boolean;
    /** how often new executions are looked for (the scan job) */
    readonly scanIntervalMs: number;
    /** an execution started this long before the last scan is still found (late traces) */
    readonly scanLookbackMs: number;
    /** judge calls at once per process, every evaluator together */
    readonly concurrency: number;
    /** attempts of one judgement (429, 5xx, timeouts, connection errors), with exponential backoff from backoffMs */
    readonly attempts: number;
    readonly backoffMs: number;
  };
  /** Experiments run by the service (docs/datasets.md, "Experiments run by the service") */
  readonly experiments: {
    /** how often unfinished experiments no process holds are looked for (started, or resumed after a restart) */
    readonly scanIntervalMs: number;
    /** how long a process holds an experiment without renewing its lease before another takes it over */
    readonly leaseMs: number;
    /** experiments driven at once per process */
    readonly drivers: number;
    /** the first retry delay of a model or judge call (doubling) */
    readonly backoffMs: number;
  };
  readonly timeouts: {
    /** a store call that takes longer fails with 503 instead of hanging */
    readonly storeMs: number;
    /** how long shutdown waits for in-flight requests before closing the stores */
    readonly shutdownMs: number;
    /** how long boot waits for a store server to accept connections */
    readonly storeConnectMs: number;
    /** a request whose body is not all received by then is cut (slow senders); an import's stream is spared */
    readonly requestMs: number;
    /** an import's stream (unbounded) is cut when no byte arrives for this long */
    readonly streamIdleMs: number;
  };
}

const MIB = 1024 * 1024;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);

  const host = str(env, 'HOST') ?? '127.0.0.1';
  const dataDir = path.resolve(str(env, 'DATA_DIR') ?? './data');
  const clickhouseUrl = url(env, 'CLICKHOUSE_URL', ['http:', 'https:']);
  const cluster = identifier(env, 'CLICKHOUSE_CLUSTER', undefined);
  if (cluster && !clickhouseUrl) throw new ConfigError('CLICKHOUSE_CLUSTER', 'needs CLICKHOUSE_URL: the embedded engine is a single node');
  const topology = clickhouseTopology(env, cluster, clickhouseUrl);
  const clickhouseReadUrl = url(env, 'CLICKHOUSE_READ_URL', ['http:', 'https:']);
  if (clickhouseReadUrl && !clickhouseUrl)
    throw new ConfigError('CLICKHOUSE_READ_URL', 'needs CLICKHOUSE_URL: the embedded engine is read in-process');

  const jwtIssuer = str(env, 'IDP_JWT_ISSUER');
  const jwksUrl = url(env, 'IDP_JWKS_URL', ['http:', 'https:']);
  // The spec: both must be set when JWT authentication is used.
  if (jwtIssuer && !jwksUrl) throw new ConfigError('IDP_JWKS_URL', 'must be set when IDP_JWT_ISSUER is set');
  if (jwksUrl && !jwtIssuer) throw new ConfigError('IDP_JWT_ISSUER', 'must be set when IDP_JWKS_URL is set');

  const maxBodyBytes = int(env, 'MAX_BODY_BYTES', 16 * MIB, 1024, 1024 * MIB);
  const maxInflatedBytes = int(env, 'MAX_INFLATED_BYTES', 64 * MIB, 1024, 4096 * MIB);
  if (maxInflatedBytes < maxBodyBytes) throw new ConfigError('MAX_INFLATED_BYTES', 'must be at least MAX_BODY_BYTES');

  const authRequired = bool(env, 'AUTH_REQUIRED', true);
  if (!authRequired && nodeEnv === 'production') {
    throw new ConfigError('AUTH_REQUIRED', 'false is refused when NODE_ENV=production: it makes every endpoint public');
  }

  return {
    nodeEnv,
    host,
    init: initProject(env),
    port: int(env, 'PORT', 8080, 0, 65535),
    otlpGrpcPort: int(env, 'OTLP_GRPC_PORT', 4317, 0, 65535),
    dataDir,
    diskMinFreeBytes: int(env, 'DISK_MIN_FREE_BYTES', 256 * MIB, 0, 1024 * 1024 * MIB),
    chdbDir: path.resolve(str(env, 'CHDB_DIR') ?? path.join(dataDir, 'clickhouse')),
    logLevel,
    clickhouse: {
      url: clickhouseUrl,
      user: str(env, 'CLICKHOUSE_USER'),
      password: str(env, 'CLICKHOUSE_PASSWORD'),
      database: identifier(env, 'CLICKHOUSE_DATABASE', 'default') as string,
      topology,
      cluster: topology === 'cluster' ? cluster : undefined,
      readUrl: clickhouseReadUrl,
    },
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: identifier(env, 'REDIS_PREFIX', 'traceloom') as string,
    jobsInApi: bool(env, 'JOBS_IN_API', true),
    authRequired,
    metricsToken: str(env, 'METRICS_TOKEN'),
    idp: {
      jwtIssuer,
      jwksUrl,
      jwtAudience: str(env, 'IDP_JWT_AUDIENCE'),
      projectClaim: str(env, 'IDP_PROJECT_CLAIM') ?? 'project_id',
      roleClaim: str(env, 'IDP_ROLE_CLAIM') ?? 'role',
      jwksCooldownMs: int(env, 'IDP_JWKS_COOLDOWN_MS', 30_000, 0, 3_600_000),
    },
    limits: {
      maxJsonBytes: int(env, 'MAX_JSON_BYTES', 1 * MIB, 1024, 64 * MIB),
      maxBodyBytes,
      maxInflatedBytes,
      maxInvoiceBytes: int(env, 'MAX_INVOICE_BYTES', 32 * MIB, 1024, 1024 * MIB),
    },
    ingest: {
      maxQueueRows: int(env, 'INGEST_MAX_QUEUE_ROWS', 100_000, 1, 10_000_000),
      maxQueueBytes: int(env, 'INGEST_MAX_QUEUE_BYTES', 256 * MIB, 1024, 16 * 1024 * MIB),
      batchRows: int(env, 'INGEST_BATCH_ROWS', 5_000, 1, 1_000_000),
      flushMs: int(env, 'INGEST_FLUSH_MS', 20, 1, 60_000),
      attempts: int(env, 'INGEST_ATTEMPTS', 5, 1, 20),
      logDir: path.resolve(str(env, 'INGEST_LOG_DIR') ?? path.join(dataDir, 'ingest-log')),
      logSegmentBytes: int(env, 'INGEST_LOG_SEGMENT_BYTES', 64 * MIB, 64 * 1024, 4 * 1024 * MIB),
      logMaxRows: int(env, 'INGEST_LOG_MAX_ROWS', 2_000_000, 1, 1_000_000_000),
      logMaxBytes: int(env, 'INGEST_LOG_MAX_BYTES', 1024 * MIB, 64 * 1024, 1024 * 1024 * MIB),
      logMemoryBytes: int(env, 'INGEST_LOG_MEMORY_BYTES', 32 * MIB, 0, 16 * 1024 * MIB),
      logMaxLagMs: int(env, 'INGEST_LOG_MAX_LAG_MS', 3_000, 0, 24 * 3600_000),
      loadBatchBytes: int(env, 'INGEST_LOAD_BATCH_BYTES', 8 * MIB, 64 * 1024, 1024 * MIB),
      loadBatchRows: int(env, 'INGEST_LOAD_BATCH_ROWS', 20_000, 1, 10_000_000),
      loadIntervalMs: int(env, 'INGEST_LOAD_INTERVAL_MS', 1_000, 1, 60_000),
      workers: int(env, 'INGEST_WORKERS', 1, 0, 64),
      // At most ~11 years wide: every span a batch holds then falls in at most ~135 months, far
      // under the partitions one insert may create (1,000): valid data cannot hit that limit.
      spanMaxAgeDays: int(env, 'INGEST_SPAN_MAX_AGE_DAYS', 3_650, 1, 3_650),
      spanMaxFutureDays: int(env, 'INGEST_SPAN_MAX_FUTURE_DAYS', 1, 0, 366),
    },
    traces: {
      debounceMs: int(env, 'TRACE_DEBOUNCE_MS', 1_000, 0, 600_000),
      quietMs: int(env, 'TRACE_QUIET_MS', 60_000, 0, 86_400_000),
    },
    scores: {
      stampTiming: {
        firstMs: int(env, 'SCORE_STAMP_DELAY_MS', 0, 0, 600_000),
        againMs: int(env, 'SCORE_STAMP_AGAIN_MS', 10_000, 0, 3_600_000),
      },
      stampSweepMs: int(env, 'SCORE_STAMP_SWEEP_MS', 60_000, 100, 86_400_000),
      stampSweepLookbackMs: int(env, 'SCORE_STAMP_SWEEP_LOOKBACK_MS', 900_000, 0, 86_400_000),
    },
    spend: {
      budgetEvalIntervalMs: int(env, 'BUDGET_EVAL_INTERVAL_MS', 60_000, 100, 86_400_000),
      budgetEvalDebounceMs: int(env, 'BUDGET_EVAL_DEBOUNCE_MS', 1_000, 0, 600_000),
      budgetCheckCacheMs: int(env, 'BUDGET_CHECK_CACHE_MS', 1_000, 0, 60_000),
      webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 5_000, 100, 60_000),
      webhookAttempts: int(env, 'WEBHOOK_ATTEMPTS', 8, 1, 20),
      webhookBackoffMs: int(env, 'WEBHOOK_BACKOFF_MS', 5_000, 1, 3_600_000),
      webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      retentionIntervalMs: int(env, 'RETENTION_INTERVAL_MS', 86_400_000, 1_000, 7 * 86_400_000),
    },
    exports: {
      dir: str(env, 'EXPORT_DIR') === undefined ? undefined : path.resolve(str(env, 'EXPORT_DIR')!),
      s3: exportS3(env),
      intervalMs: int(env, 'EXPORT_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
      delayMs: int(env, 'EXPORT_DELAY_MS', 3_600_000, 0, 86_400_000),
      catchUpDays: int(env, 'EXPORT_CATCH_UP_DAYS', 7, 1, 366),
    },
    monitors: {
      intervalMs: int(env, 'MONITOR_INTERVAL_MS', 60_000, 100, 3_600_000),
      claimBatch: int(env, 'MONITOR_CLAIM_BATCH', 50, 1, 1_000),
      maxRounds: int(env, 'MONITOR_MAX_ROUNDS', 20, 1, 1_000),
      maxPerProject: int(env, 'MONITOR_MAX_PER_PROJECT', 1_000, 1, 100_000),
    },
    evaluators: {
      secretsKey: secretsKey(env),
      allowPrivate: bool(env, 'EVALUATOR_ALLOW_PRIVATE', false),
      scanIntervalMs: int(env, 'EVALUATOR_SCAN_INTERVAL_MS', 10_000, 50, 3_600_000),
      scanLookbackMs: int(env, 'EVALUATOR_SCAN_LOOKBACK_MS', 600_000, 0, 7 * 86_400_000),
      concurrency: int(env, 'EVALUATOR_CONCURRENCY', 8, 1, 256),
      attempts: int(env, 'EVALUATOR_ATTEMPTS', 4, 1, 20),
      backoffMs: int(env, 'EVALUATOR_BACKOFF_MS', 2_000, 1, 3_600_000),
    },
    experiments: {
      scanIntervalMs: int(env, 'EXPERIMENT_SCAN_INTERVAL_MS', 5_000, 50, 3_600_000),
      leaseMs: int(env, 'EXPERIMENT_LEASE_MS', 30_000, 300, 3_600_000),
      drivers: int(env, 'EXPERIMENT_DRIVERS', 4, 1, 64),
      backoffMs: int(env, 'EXPERIMENT_BACKOFF_MS', 1_000, 1, 3_600_000),
    },
    timeouts: {
      storeMs: int(env, 'STORE_TIMEOUT_MS', 10_000, 100, 600_000),
      shutdownMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 15_000, 0, 600_000),
      storeConnectMs: int(env, 'STORE_CONNECT_TIMEOUT_MS', 30_000, 0, 600_000),
      requestMs: int(env, 'REQUEST_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
      streamIdleMs: int(env, 'STREAM_IDLE_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
    },
  };
}
