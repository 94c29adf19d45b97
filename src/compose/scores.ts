// The composition of scores (docs/scores.md; part of the one root, src/compose/): their writer
// and repository, the service that stamps them with their executions' dimensions, the queue and
// the sweep that stamp them again when an execution is written after them, the log of scores
// accepted before they are stored (Prefer: respond-async), and the comparison of prompt versions.
import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { ClickHouseSettings } from '@clickhouse/client';
import type { BatchWriter } from '../stores/batch-writer.ts';
import { WriteAheadLog } from '../stores/write-ahead-log.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import { toClickHouseTime } from '../time.ts';
import { createScoreService, type ScoreService } from '../scores/service.ts';
import { createRestampQueue } from '../scores/restamp-queue.ts';
import { createScoreRepository, type ScoreRepository } from '../scores/score-repository.ts';
import { backfillScoreGrainsIfEmpty, groupScores } from '../scores/score-aggregate-repository.ts';
import { createScoreLoader, type ScoreLoader, type ScoreLogHeader } from '../scores/score-log.ts';
import { createScoreConfigs, type ScoreConfigs } from '../scores/score-config-repository.ts';
import { STAMP_SWEEP_JOB, stampSweepProcessor, type StampSweepData } from '../scores/stamp-sweep.ts';
import { createComparison, type Comparison } from '../quality/compare.ts';
import { createExecutionStamps } from '../executions/execution-stamp-repository.ts';
import { createPromptGroupCosts } from '../executions/prompt-group-repository.ts';

export interface ScoreArea {
  service: ScoreService;
  configs: ScoreConfigs;
  comparison: Comparison;
  /** Batches accepted before they are stored (score-log.ts). */
  loader: ScoreLoader;
  repository: ScoreRepository;
  /** Executions of these traces were written: their scores are stamped again shortly. */
  executionsWritten(projectId: string, traceIds: string[]): void;
  processors(): JobProcessor[];
  /** Fills the score rollups from scores stored before them; returns the tables filled. */
  backfill(): Promise<string[]>;
  /** Loads what the log holds from an earlier run; returns the records replayed. */
  start(): number;
  schedule(runner: JobRunner): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createScoreArea(
  config: Config,
  stores: Stores,
  logger: Logger,
  deps: {
    /** The batching writer of a ClickHouse table (domain.ts). */
    writerOf: (table: string, flushIntervalMs: number, settings: ClickHouseSettings) => BatchWriter;
    /** The traces whose executions were written since `since` (ClickHouse time text), for the sweep. */
    writtenSince: (since: string) => Promise<Array<{ project_id: string; trace_id: string }>>;
  },
): ScoreArea {
  const configs = createScoreConfigs(stores.postgres);
  // Score writes go out at once; those that come while one is being stored go out together next.
  // Their rows are not merged as they are inserted (optimize_on_insert): the rollup's view sums
  // them already, the id index and the scores table find next to nothing to collapse in one
  // round, and the merges do it later all the same (an insert of 10,000: 215 → 167 ms).
  const writer = deps.writerOf('scores', 0, { optimize_on_insert: 0 });
  const repository = createScoreRepository(stores.clickhouse, writer);
  const executionStamps = createExecutionStamps(stores.clickhouse);
  // Traces whose scores are stamped again shortly: executions just written, and scores written
  // while their execution was unknown. The queue calls the score service; the service fills it.
  const restamps = createRestampQueue({
    restamp: async (projectId, traceIds) => void (await service.restamp(projectId, traceIds)),
    timing: config.scores.stampTiming,
    onError: (err) => logger.warn({ err: { message: (err as Error).message } }, 'scores not stamped; trying again shortly'),
    now: Date.now,
  });
  const service = createScoreService({
    repository,
    configs,
    stamps: (projectId, traceIds) => executionStamps.scoreStamps(projectId, traceIds),
    onUnstamped: (projectId, traceIds) => restamps.add(projectId, traceIds),
  });
  const comparison = createComparison({
    costs: createPromptGroupCosts(stores.clickhouse),
    scores: (read, names) => groupScores(stores.clickhouse, read, names),
    now: () => new Date(),
  });
  const stampSweep = stampSweepProcessor({
    unstampedTraces: (after, limit) => repository.unstampedTraces(after, limit),
    writtenSince: (sinceMs) => deps.writtenSince(toClickHouseTime(new Date(sinceMs))),
    restamp: (projectId, traceIds) => service.restamp(projectId, traceIds),
  });
  // Scores accepted before they are stored (Prefer: respond-async): a log of their own beside the
  // spans', with the same bounds of size; clients are held, not refused, while it is behind (score-log.ts).
  const loader = createScoreLoader({
    log: new WriteAheadLog<ScoreLogHeader>(
      path.join(config.ingest.logDir, 'scores'),
      {
        segmentBytes: config.ingest.logSegmentBytes,
        maxPendingBytes: config.ingest.logMaxBytes,
        maxPendingRows: config.ingest.logMaxRows,
        maxMemoryBytes: config.ingest.logMemoryBytes,
        disk: stores.disk,
      },
      (h) => h.n,
    ),
    scores: service,
    retryMs: 1_000,
    logger,
  });

  return {
    service,
    configs,
    comparison,
    loader,
    repository,
    executionsWritten: (projectId, traceIds) => restamps.add(projectId, traceIds),
    processors: () => [stampSweep as JobProcessor],
    backfill: () => backfillScoreGrainsIfEmpty(stores.clickhouse),
    start: () => loader.start(),
    async schedule(runner) {
      // Scores whose restamp died with the previous process (kept in its memory) are found again:
      // now, with the executions written shortly before this start, then periodically.
      await runner.enqueue<StampSweepData>(
        STAMP_SWEEP_JOB,
        { writtenSinceMs: Date.now() - config.scores.stampSweepLookbackMs },
        { jobId: 'stamp-sweep-start' },
      );
      await runner.every(STAMP_SWEEP_JOB, config.scores.stampSweepMs, {});
    },
    // The loader's batches first, then their restamps, then the writer that holds both.
    async flush() {
      await loader.flush();
      await restamps.flush();
      await writer.flush();
    },
    async close() {
      await loader
        .stop()
        .catch((err: unknown) =>
          logger.warn({ err: { message: (err as Error).message } }, 'accepted scores kept in their log at shutdown'),
        );
      await restamps
        .flush()
        .catch((err: unknown) => logger.warn({ err: { message: (err as Error).message } }, 'scores not stamped at shutdown'));
      await writer.close();
    },
  };
}
