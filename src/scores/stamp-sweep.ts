// The stamp sweep (docs/scores.md, "Storage"): what the in-memory restamp queue (restamp-queue.ts)
// would have done, found again from the stores, so no score waits on a process that died. At start
// and then periodically it restamps every trace holding a live score without a stamp (a score
// written before its execution: an OpenTelemetry evaluation event is stored before its trace is
// assembled) whose execution now exists; at start, also the traces whose executions were written
// shortly before (a restamp lost with the previous process). A restamp writes nothing for a score
// whose stamp is current, so a sweep that finds nothing to do writes nothing.
import type { JobProcessor } from '../jobs/runner.ts';

export const STAMP_SWEEP_JOB = 'scores.stamp-sweep';

/** Traces read per page of the sweep, and restamped at once. */
const PAGE = 10_000;
const CHUNK = 1_000;

export interface StampSweepData {
  /** Also restamp the traces whose executions were written since then (ms since the epoch). */
  writtenSinceMs?: number;
}

export interface StampSweepDeps {
  unstampedTraces(
    after: { projectId: string; traceId: string } | undefined,
    limit: number,
  ): Promise<Array<{ project_id: string; trace_id: string }>>;
  writtenSince(sinceMs: number): Promise<Array<{ project_id: string; trace_id: string }>>;
  /** Restamps these traces of a project; resolves with the scores restamped. */
  restamp(projectId: string, traceIds: string[]): Promise<number>;
}

/** One sweep: returns the scores it stamped. */
export async function sweepStamps(deps: StampSweepDeps, data: StampSweepData = {}): Promise<number> {
  let stamped = 0;
  const restampAll = async (traces: ReadonlyArray<{ project_id: string; trace_id: string }>) => {
    const byProject = new Map<string, string[]>();
    for (const t of traces) {
      const list = byProject.get(t.project_id);
      if (list) list.push(t.trace_id);
      else byProject.set(t.project_id, [t.trace_id]);
    }
    for (const [projectId, ids] of byProject)
      for (let i = 0; i < ids.length; i += CHUNK) stamped += await deps.restamp(projectId, ids.slice(i, i + CHUNK));
  };
  let after: { projectId: string; traceId: string } | undefined;
  for (;;) {
    const page = await deps.unstampedTraces(after, PAGE);
    if (page.length === 0) break;
    await restampAll(page);
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = { projectId: last.project_id, traceId: last.trace_id };
  }
  if (data.writtenSinceMs !== undefined) await restampAll(await deps.writtenSince(data.writtenSinceMs));
  return stamped;
}

export function stampSweepProcessor(deps: StampSweepDeps): JobProcessor<StampSweepData> {
  return {
    name: STAMP_SWEEP_JOB,
    attempts: 3,
    backoffMs: 1_000,
    async process(data, ctx) {
      const n = await sweepStamps(deps, data ?? {});
      if (n > 0) ctx.logger.info({ scores: n }, 'scores stamped by the sweep (their restamp was not done before)');
    },
  };
}
