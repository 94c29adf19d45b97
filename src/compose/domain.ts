// The composition root: the domain services of one process, built once at boot from the stores,
// in dependency order, wired to each other here and nowhere else (docs/architecture.md): what
// routes and jobs call. The spend, scores, evaluators, experiments, monitors and finance areas are
// composed beside it (spend.ts, scores.ts, ...); no domain folder wires itself.
// Owns the batching writers, so it is closed (flushed) before the stores.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { Broadcast } from '../stores/broadcast.ts';
import type { ClickHouseSettings } from '@clickhouse/client';
import { BatchWriter } from '../stores/batch-writer.ts';
import { WriteAheadLog } from '../stores/write-ahead-log.ts';
import { createMetrics, type Metrics } from '../metrics.ts';
import { createSpanLoader, type IngestDeadLetters, type IngestLog, type SpanLoader } from '../ingest/span-loader.ts';
import { DeadLetters } from '../stores/dead-letters.ts';
import { startWindow } from '../time.ts';
import { scoreFilterSql } from '../scores/score-aggregate-repository.ts';
import { createDeadLetterService, type DeadLetterService } from '../ingest/dead-letter-service.ts';
import { createPromptCache } from '../prompts/cache.ts';
import { createPromptService, type PromptService } from '../prompts/service.ts';
import { createExecutionListing, type ExecutionListing } from '../executions/execution-listing-repository.ts';
import { createSessionList, type SessionList } from '../executions/session-list-repository.ts';
import { createSessionConversation, type SessionConversation } from '../executions/session-conversation.ts';
import { createListTotals } from '../spend/list-totals.ts';
import { createExecutionDetail, type ExecutionDetail } from '../executions/execution-detail-repository.ts';
import { createExecutionAssembly } from '../executions/execution-assembly-repository.ts';
import { createExecutionBreakdowns } from '../executions/execution-breakdown-repository.ts';
import { backfillPromptVersionDaysIfEmpty } from '../executions/prompt-group-repository.ts';
import { createExecutionRecorder, type ExecutionRecorder } from '../executions/record.ts';
import { createPriceResolver, type PriceResolver } from '../pricing/prices.ts';
import { createModelPriceService, type ModelPriceService } from '../pricing/price-table.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import { createLocalPendingTraces, createRedisPendingTraces, type PendingTraces } from '../ingest/assembly/pending.ts';
import { ASSEMBLY_JOB, createAssembler, type Assembler } from '../ingest/assembly/assembler.ts';
import { STORED_SPAN_COLUMNS } from '../executions/span-rows.ts';
import { createTraceIngest, type TraceIngest } from '../ingest/traces.ts';
import { createEncodePool, type EncodePool } from '../ingest/encode-pool.ts';
import { createLogIngest, type LogIngest } from '../ingest/logs.ts';
import { createSpanRepository, type SpanRepository } from '../executions/span-repository.ts';
import { createTraceViews, type TraceViews } from '../executions/trace-views.ts';
import { createExecutionView, type ExecutionView } from '../executions/execution-view.ts';
import { apiKeyNames } from '../auth/api-key-repository.ts';
import { spansWithLogMessages } from '../ingest/assembly/log-messages.ts';
import { createTracePromptReferences } from '../prompts/trace-references.ts';
import { createSpend, type Spend } from './spend.ts';
import { createScoreArea, type ScoreArea } from './scores.ts';
import { createReprice, type Reprice } from '../spend/reprice.ts';
import { createParquetExport, type ParquetExport } from '../exports/parquet-export.ts';
import { createScheduledExport, type ScheduledExport } from '../exports/scheduled-export.ts';
import { createExportStore } from '../exports/export-repository.ts';
import { createSpendRollupRepository } from '../spend/spend-rollup-repository.ts';
import path from 'node:path';
import { createRepriceLedger } from '../executions/reprice-ledger-repository.ts';
import { createRepriceJobStore } from '../spend/reprice-job-repository.ts';
import { createDatasetRepository } from '../datasets/dataset-repository.ts';
import { createDatasets, type Datasets } from '../datasets/datasets.ts';
import { createImportRepository } from '../datasets/import-repository.ts';
import { createImports, type Imports } from '../datasets/imports.ts';
import { createRunRepository } from '../datasets/run-repository.ts';
import { createRuns, type Runs } from '../datasets/runs.ts';
import { createRunComparison, type RunComparison } from '../datasets/run-compare.ts';
import { createEvaluators, type Evaluators } from './evaluators.ts';
import { createPlayground, type Playground } from '../playground/playground.ts';
import type { Experiments } from '../datasets/experiments.ts';
import { createExperimentArea } from './experiments.ts';
import { createLabelGates, type LabelGates } from '../release-gates/label-gates.ts';
import type { Monitors } from '../monitors/monitors.ts';
import { createMonitorArea } from './monitors.ts';
import { createFinance, type Finance } from './finance.ts';

export interface Domain {
  metrics: Metrics;
  prompts: PromptService;
  /** Release gates on prompt labels, their approvals and label events (src/release-gates, docs/prompts.md). */
  labelGates: LabelGates;
  executions: {
    /** The listing (filters, pages, export, sessions and users). */
    listing: ExecutionListing;
    /** The same listing reading where CLICKHOUSE_READ_URL points: the CSV and JSON Lines exports of GET …/executions/export. */
    exports: Pick<ExecutionListing, 'export'>;
    /** One execution, or those of a few traces, through the trace index. */
    detail: ExecutionDetail;
    /** Pages of sessions with their count, and a session as one conversation. */
    sessions: { list: SessionList; conversation: SessionConversation };
    recorder: ExecutionRecorder;
    writer: BatchWriter;
    views: TraceViews;
    /** One execution as its GET shows it: with why it failed (from its spans) and its API key's name. */
    view: ExecutionView;
    parquet: ParquetExport;
    scheduledExport: ScheduledExport;
  };
  /** Price resolution (project prices, then the catalogue) and the project price table. */
  prices: { resolver: PriceResolver; models: ModelPriceService };
  /** OTLP spans: ingest, assembly into executions, reads for hierarchy and timeline. */
  traces: {
    ingest: TraceIngest;
    assembler: Assembler;
    spans: SpanRepository;
    log: IngestLog;
    loader: SpanLoader;
    pending: PendingTraces;
    deadLetters: DeadLetterService;
  };
  /** `loader`: batches accepted before they are stored (Prefer: respond-async; score-log.ts). */
  scores: Pick<ScoreArea, 'service' | 'configs' | 'comparison' | 'loader'>;
  /** Datasets, their items and experiment runs: src/datasets, docs/datasets.md. */
  datasets: { datasets: Datasets; imports: Imports; runs: Runs; comparison: RunComparison };
  /** OTLP logs: GenAI events joined to their spans (stored in span_log_events, merged where spans are read). */
  logs: { ingest: LogIngest; writer: BatchWriter };
  /** Stats, template analytics, budgets (alerts, checks) and retention: src/spend, docs/spend.md. */
  spend: Spend;
  /** Repricing executions after a price change (dry run, jobs with progress): src/spend/reprice.ts. */
  reprice: Reprice;
  /** LLM-as-judge: model connections, evaluators and their jobs (src/evaluators, docs/evaluators.md). */
  evaluators: Evaluators;
  /** Versions tried on model connections before they ship (src/playground, docs/playground.md). */
  playground: Playground;
  /** Experiments run by the service over datasets (src/datasets/experiments.ts, docs/datasets.md). */
  experiments: Experiments;
  /** Metrics over windows of executions, with conditions and alerts (src/monitors, docs/monitors.md). */
  monitors: Monitors;
  /** Invoices, their reconciliation and chargeback statements (src/finance, docs/spend.md). */
  finance: Finance;
  /** The job processors that call this domain (registered on the runner at boot, API and worker alike). */
  processors(): JobProcessor[];
  /** Starts the recurring jobs (idempotent across nodes: one schedule per name). */
  schedule(runner: JobRunner): Promise<void>;
  /** Opens the ingest log (loading what an earlier run left in it) and starts its loader: API processes only. */
  startIngest(): Promise<void>;
  /** Writes what the writers hold now (they keep accepting). */
  flush(): Promise<void>;
  /** Flushes the writers and stops them accepting. */
  close(): Promise<void>;
}

export function createDomain(
  config: Config,
  stores: Stores,
  broadcast: Broadcast,
  logger: Logger,
  jobs: Pick<JobRunner, 'enqueue'>,
): Domain {
  /** The batching writer of one ClickHouse table (spans and executions share the ingest settings). */
  const writerOf = (table: string, flushIntervalMs = config.ingest.flushMs, settings?: ClickHouseSettings) =>
    new BatchWriter(
      (t, rows, insertSettings) => stores.clickhouse.insert(t, rows, insertSettings),
      {
        table,
        maxQueueRows: config.ingest.maxQueueRows,
        maxQueueBytes: config.ingest.maxQueueBytes,
        maxBatchRows: config.ingest.batchRows,
        flushIntervalMs,
        maxAttempts: config.ingest.attempts,
        backoffMs: 200,
        settings,
      },
      logger,
    );
  const metrics = createMetrics();
  const executionBreakdowns = createExecutionBreakdowns(stores.clickhouse);
  const spend = createSpend(config, stores, logger, jobs, metrics, executionBreakdowns);
  // Block mode: an exceeded budget makes rendering answer 402.
  const prompts = createPromptService(stores.postgres, createPromptCache(broadcast), {
    beforeRender: (projectId) => spend.budgets.enforce(projectId),
  });
  const writer = writerOf('executions');
  const rollups = createSpendRollupRepository(stores.clickhouse);
  const intactSince = (projectId: string) => spend.retention.intactSince(projectId, spend.clock.now());
  const listingOptions: Parameters<typeof createExecutionListing>[1] = {
    scoreFilter: scoreFilterSql,
    // The list's score columns: read from the scores table by its own repository (made below).
    latestScores: (projectId, traceIds, names) => scores.repository.latestOf(projectId, traceIds, names),
    // A list's total over the whole hours a rollup by grain holds, within what retention kept.
    rollupTotal: createListTotals({ rollups, intactSince, now: () => spend.clock.now() }),
    intactSince,
    // Each list item's api_key_name: one lookup of the page's keys in PostgreSQL.
    keyNames: (projectId, keyIds) => apiKeyNames(stores.postgres, projectId, keyIds),
  };
  const listing = createExecutionListing(stores.clickhouse, listingOptions);
  // Exports read where CLICKHOUSE_READ_URL points (a replica, a read-only compute group); the
  // evaluators' scans, which must see every row stored, read the primary (`listing`).
  const exportListing =
    stores.clickhouseReads === stores.clickhouse ? listing : createExecutionListing(stores.clickhouseReads, listingOptions);
  const detail = createExecutionDetail(stores.clickhouse);
  const assembly = createExecutionAssembly(stores.clickhouse);
  const resolver = createPriceResolver(stores.postgres, broadcast);
  const parquet = createParquetExport(stores.clickhouseReads, exportListing, path.join(config.dataDir, 'export-scratch'));
  const scheduledExport = createScheduledExport({
    config: config.exports,
    scratchDir: path.join(config.dataDir, 'export-scratch'),
    store: createExportStore(stores.postgres),
    parquet,
    queries: listing,
    daysWithExecutions: (projectId, from, to) => rollups.daysWithExecutions(projectId, from, to),
    now: () => spend.clock.now(),
    logger: logger.child({ area: 'exports' }),
  });
  const scores = createScoreArea(config, stores, logger, {
    writerOf,
    writtenSince: (since: string) => assembly.writtenSince(since),
  });
  const recorder = createExecutionRecorder({
    writer,
    startWindow: (nowMs) => startWindow(nowMs, config.ingest.spanMaxAgeDays, config.ingest.spanMaxFutureDays),
    prompts,
    prices: resolver,
    queries: { traceHash: assembly.traceHash, get: detail.get },
    onSpendMoved: (projectId) => spend.spendMoved(projectId),
    onExecutionsWritten: (projectId, traceIds) => scores.executionsWritten(projectId, traceIds),
  });

  const pending = stores.redis ? createRedisPendingTraces(stores.redis, { lockMs: 120_000, retryMs: 1_000 }) : createLocalPendingTraces();
  const spans = createSpanRepository(stores.clickhouse);
  const assembler = createAssembler({
    spans,
    executions: assembly,
    executionsWriter: writer,
    pending,
    jobs,
    logger,
    quietMs: config.traces.quietMs,
    metrics,
    prices: resolver,
    onSpendMoved: (projectId) => spend.spendMoved(projectId),
    onExecutionsWritten: (projectId, traceIds) => scores.executionsWritten(projectId, traceIds),
    ...createTracePromptReferences(prompts, logger),
  });
  const reprice = createReprice({
    ledger: createRepriceLedger(stores.clickhouse),
    traces: { preview: (projectId, traceIds) => assembler.preview(projectId, traceIds), reassemble: (refs) => assembler.reassemble(refs) },
    store: createRepriceJobStore(stores.postgres),
    prices: resolver,
    jobs,
    logger: logger.child({ area: 'reprice' }),
    onSpendMoved: (projectId) => spend.spendMoved(projectId),
  });
  let recovering: Promise<unknown> | undefined;
  const views = createTraceViews({
    queries: detail,
    spansOf: (projectId, traceId) => spansWithLogMessages(spans, projectId, traceId),
    prices: resolver,
  });
  const view = createExecutionView({
    detail,
    failedSpans: (projectId, traceId) => spans.failedOf(projectId, traceId),
    keyNames: (projectId, keyIds) => apiKeyNames(stores.postgres, projectId, keyIds),
  });
  const datasetRepository = createDatasetRepository(stores.postgres);
  const runRepository = createRunRepository(stores.postgres);
  const runReads = { executions: detail, scores: scores.repository };
  const datasets = {
    datasets: createDatasets({
      repository: datasetRepository,
      executions: detail,
      runCount: (projectId, datasetId) => runRepository.count(projectId, datasetId),
    }),
    imports: createImports({ imports: createImportRepository(stores.postgres), datasets: datasetRepository }),
    runs: createRuns({ ...runReads, runs: runRepository, items: datasetRepository }),
    comparison: createRunComparison({
      runs: runRepository,
      reads: { ...runReads, versionsOf: (projectId, pairs) => datasetRepository.versionsOf(projectId, pairs) },
    }),
  };
  const labelGates = createLabelGates({
    db: stores.postgres,
    prompts,
    dataset: (projectId, datasetId) => datasetRepository.getDataset(projectId, datasetId),
    runs: runRepository,
    measure: datasets.comparison.measure,
  });
  const evaluators = createEvaluators(config, stores.postgres, logger, jobs, {
    queries: { get: detail.get, export: listing.export, arrivedSince: listing.arrivedSince },
    listing,
    recorder,
    prompts,
    scoreConfigs: scores.configs,
    scores: scores.service,
    runs: datasets.runs,
    // The evaluator's judge calls of the UTC day, from the rollup of its metadata pair (exact).
    async judgeSpendToday(projectId, evaluatorId) {
      const day = Math.floor(spend.clock.now().getTime() / 86_400_000) * 86_400_000;
      const { total } = await spend.breakdowns.breakdown(projectId, {
        'metadata.evaluator_id': evaluatorId,
        start: new Date(day).toISOString(),
        end: new Date(day + 86_400_000).toISOString(),
      });
      return total.cost_usd;
    },
  });
  const playground = createPlayground({
    prompts,
    connections: evaluators.connections,
    recorder,
    enforceBudget: (projectId) => spend.budgets.enforce(projectId),
    allowPrivate: config.evaluators.allowPrivate,
    logger: logger.child({ area: 'playground' }),
  });
  const experimentArea = createExperimentArea(config, stores.postgres, logger, {
    jobs,
    prompts,
    recorder,
    scoreConfigs: scores.configs,
    scores: scores.service,
    datasets: datasetRepository,
    runs: datasets.runs,
    evaluators,
    enforceBudget: (projectId) => spend.budgets.enforce(projectId),
  });
  // The window ends at the spend clock's now (tests move it).
  const monitors = createMonitorArea(config, stores, logger, { jobs, metrics, prompts, now: () => spend.clock.now() });
  const finance = createFinance(config, stores, logger, { breakdowns: spend.breakdowns, now: () => spend.clock.now() });
  const log: IngestLog = new WriteAheadLog(
    config.ingest.logDir,
    {
      segmentBytes: config.ingest.logSegmentBytes,
      maxPendingBytes: config.ingest.logMaxBytes,
      maxPendingRows: config.ingest.logMaxRows,
      maxMemoryBytes: config.ingest.logMemoryBytes,
      maxLagMs: config.ingest.logMaxLagMs,
      disk: stores.disk,
    },
    (h) => h.n,
  );
  const deadLetters: IngestDeadLetters = new DeadLetters(path.join(config.ingest.logDir, 'dead-letters'));
  const loader = createSpanLoader({
    log,
    deadLetters,
    async storesAnswer() {
      const h = await stores.health();
      return h.clickhouse === 'ok' && h.postgres === 'ok' && h.redis !== 'down';
    },
    insertSpans: (payloads, token, columns) => spans.insert(payloads, token, columns),
    spanDecoder: (columns) => stores.clickhouse.decoderOf('spans', STORED_SPAN_COLUMNS, columns),
    knownTraces: (projectId, ids) => assembler.knownTraces(projectId, ids),
    assembleFresh: (projectId, traces, token) => assembler.assembleFresh(projectId, traces, token),
    pending,
    wake: (dueAt) => assembler.wake(dueAt),
    debounceMs: config.traces.debounceMs,
    maxBatchBytes: config.ingest.loadBatchBytes,
    batchRows: config.ingest.loadBatchRows,
    flushMs: config.ingest.loadIntervalMs,
    metrics,
    logger,
  });
  let ingestStarted = false;
  let encodePool: EncodePool | undefined;
  const ingest = createTraceIngest({
    encodePool: () => encodePool,
    log,
    spansEncoder: () => stores.clickhouse.encoderOf('spans'),
    pending,
    maxQueueRows: config.ingest.logMaxRows,
    maxQueueBytes: config.ingest.logMaxBytes,
    spanMaxAgeDays: config.ingest.spanMaxAgeDays,
    spanMaxFutureDays: config.ingest.spanMaxFutureDays,
    recordEvaluations: (projectId, evaluations, author) => scores.service.recordEvaluations(projectId, evaluations, author),
    recordRunLinks: (projectId, links) => datasets.runs.linkFromSpans(projectId, links),
    metrics,
    refusals: stores.refusals,
    logger,
  });
  const logsWriter = writerOf('span_log_events');
  const logs = createLogIngest({
    writer: logsWriter,
    recordEvaluations: (projectId, evaluations, author) => scores.service.recordEvaluations(projectId, evaluations, author),
    spanOfResponse: (projectId, responseId) => spans.ofResponse(projectId, responseId),
    pending,
    wake: (dueAt) => assembler.wake(dueAt),
    debounceMs: config.traces.debounceMs,
    metrics,
    logger,
  });
  metrics.setSources({
    ingestQueue: () => ({
      rows: log.pendingRows,
      bytes: log.pendingBytes,
      records: log.queued,
      segments: log.segments,
      oldestWaitingMs: log.oldestUnloadedMs(),
    }),
    deadLetters: () => ({ records: deadLetters.count, bytes: deadLetters.bytes }),
    assemblyNextDue: () => pending.nextDue(),
    storeHealth: async () => {
      const h = await stores.health();
      return { clickhouse: h.clickhouse, postgres: h.postgres, redis: h.redis };
    },
  });

  return {
    metrics,
    prompts,
    labelGates,
    scores,
    datasets,
    executions: {
      listing,
      exports: exportListing,
      detail,
      sessions: {
        list: createSessionList(stores.clickhouse, {
          scoreFilter: scoreFilterSql,
          recent: (projectId, q) => listing.activity(projectId, 'session', q),
        }),
        conversation: createSessionConversation({ listing, detail }),
      },
      recorder,
      writer,
      views,
      view,
      parquet,
      scheduledExport,
    },
    prices: { resolver, models: createModelPriceService(stores.postgres, resolver) },
    traces: { ingest, assembler, spans, log, loader, pending, deadLetters: createDeadLetterService({ log, deadLetters }) },
    logs: { ingest: logs, writer: logsWriter },
    spend,
    reprice,
    evaluators,
    playground,
    experiments: experimentArea.experiments,
    monitors,
    finance,
    processors: () => [
      assembler.processor,
      ...spend.processors(),
      reprice.processor as JobProcessor,
      scheduledExport.processor,
      ...scores.processors(),
      ...evaluators.jobs.processors(),
      ...experimentArea.processors(),
      ...monitors.processors(),
      ...finance.processors(),
    ],
    async startIngest() {
      // Before this node ingests: executions stored before the spend rollups existed are copied in once.
      const filled = await rollups.backfillIfEmpty(
        () => executionBreakdowns.anyStored(),
        (table) => executionBreakdowns.aggregateIntoHourly(table),
        (rollup) => executionBreakdowns.aggregateIntoGrains(rollup),
      );
      if (filled.length) logger.info({ tables: filled }, 'spend rollups filled from the executions stored before them');
      if (await backfillPromptVersionDaysIfEmpty(stores.clickhouse))
        logger.info({ tables: ['prompt_version_days'] }, 'prompt days filled from the executions stored before them');
      const scoresFilled = await scores.backfill();
      if (scoresFilled.length) logger.info({ tables: scoresFilled }, 'score rollups filled from the scores stored before them');
      // The column list of `spans` is read now: ingest encodes rows without asking the store.
      await stores.clickhouse.encoderOf('spans');
      if (config.ingest.workers > 0) {
        encodePool = createEncodePool({
          size: config.ingest.workers,
          columns: await stores.clickhouse.columnsOf('spans'),
          logger,
        });
      }
      ingestStarted = true;
      // Only a process that serves ingest owns a log (a worker has none): opened before it listens.
      const replayed = log.open();
      const dead = deadLetters.open();
      if (dead > 0) logger.warn({ records: dead }, 'ingest log: dead letters are kept (GET /api/projects/{id}/ingest/dead-letters)');
      if (replayed > 0) logger.info({ records: replayed }, 'ingest log: records not loaded before the last stop are loaded now');
      loader.start();
      const scoresReplayed = scores.start();
      if (scoresReplayed > 0) logger.info({ records: scoresReplayed }, 'scores log: batches accepted before the last stop are stored now');
    },
    async schedule(runner) {
      // A safety net: traces whose wake-up was lost (a crash between storing and marking) are
      // still assembled.
      await runner.every(ASSEMBLY_JOB, 10_000, {});
      // Pending traces kept in this process's memory died with the previous process: find the
      // ones still owed an assembly (in the background; start-up does not wait for it).
      if (!stores.redis) {
        recovering = assembler.recover(Date.now() - 24 * 3_600_000).then(
          (n) => n > 0 && logger.info({ traces: n }, 'traces re-marked for assembly after a restart'),
          (err: Error) => logger.warn({ err: { message: err.message } }, 'could not recover pending traces'),
        ) as Promise<unknown>;
      }
      await scores.schedule(runner);
      await spend.schedule(runner);
      await reprice.resume(runner);
      await scheduledExport.schedule(runner);
      await evaluators.jobs.schedule(runner);
      await experimentArea.schedule(runner);
      await monitors.schedule(runner);
      await finance.schedule(runner);
    },
    // Spans first: their assembly writes executions.
    flush: async () => {
      if (ingestStarted) await loader.flush();
      await Promise.all([writer.flush(), logsWriter.flush()]);
      // Then the scores: their restamps read the executions just written.
      await scores.flush();
    },
    close: async () => {
      await recovering;
      if (ingestStarted) await loader.stop();
      await encodePool?.close();
      await Promise.all([writer.close(), logsWriter.close()]);
      await scores.close();
    },
  };
}
