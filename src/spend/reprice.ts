// Repricing (POST .../reprice): after a price was added or corrected, the executions of a window
// (optionally of one provider/model) are priced again with the prices in force at their start.
// A dry run answers how many would change and by how much; otherwise a job rewrites each changed
// execution as a correction (cancel row + new version), so daily spend, breakdowns, stats,
// budgets and exports move by exactly the dry run's delta. Same plan code for both.
import { badRequest, conflict, notFound } from '../errors.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { Logger } from '../logger.ts';
import { computeCost } from '../pricing/cost.ts';
import { fromScaled, NANOS } from '../decimal.ts';
import type { PriceResolver } from '../pricing/prices.ts';
import { parseTime, toClickHouseTime } from '../time.ts';
import { nanos } from './money.ts';
import { contextOf, CostLines, detailsOf } from '../executions/cost-lines.ts';
import type { LedgerRow, RepriceLedger } from '../executions/reprice-ledger-repository.ts';
import type { RepriceJobRow, RepriceJobStore, RepriceScope } from './reprice-job-repository.ts';
import { MAX_WINDOW_DAYS } from './window.ts';

export const REPRICE_JOB = 'reprice';
const PAGE = 1_000;

export interface RepriceInput {
  provider?: string;
  model?: string;
  from: string | number;
  to: string | number;
  dry_run?: boolean;
}

interface Repriced {
  delta: bigint;
  /** The cancel row and the new version, or undefined when the price did not change anything. */
  rows?: object[];
}

/** OTLP executions: priced span by span, so priced again by assembling their traces again (the assembler). */
export interface RepriceTraces {
  /** What assembling these traces again now would change (cost before and after, exact text); unchanged ones absent. */
  preview(projectId: string, traceIds: string[]): Promise<Map<string, { before: string; after: string }>>;
  /** Assembles them again now, writing the corrections through assembly's own (leased) path. */
  reassemble(refs: Array<{ projectId: string; traceId: string }>): Promise<void>;
}

export interface RepriceDeps {
  ledger: RepriceLedger;
  traces: RepriceTraces;
  store: RepriceJobStore;
  prices: PriceResolver;
  jobs: Pick<JobRunner, 'enqueue'>;
  logger: Logger;
  /** Called after a job wrote corrections (budget evaluation). */
  onSpendMoved?: (projectId: string) => void;
}

const usd = (n: bigint) => fromScaled(n, NANOS);

function parseScope(input: RepriceInput): RepriceScope {
  const from = parseTime(input.from, 'from');
  const to = parseTime(input.to, 'to');
  if (from >= to) throw badRequest('from: must be before to');
  if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * 86_400_000) throw badRequest(`to: at most ${MAX_WINDOW_DAYS} days after from`);
  return {
    from,
    to,
    ...(input.provider !== undefined ? { provider: input.provider } : {}),
    ...(input.model !== undefined ? { model: input.model } : {}),
  };
}

function presentJob(j: RepriceJobRow) {
  return {
    id: j.reprice_id,
    status: j.status,
    provider: j.provider,
    model: j.model,
    from: j.from_at.toISOString(),
    to: j.to_at.toISOString(),
    requested_by: j.requested_by,
    executions_total: Number(j.executions_total),
    executions_scanned: Number(j.executions_scanned),
    executions_changed: Number(j.executions_changed),
    spend_delta_usd: usd(nanos(j.spend_delta_usd)),
    error: j.error,
    created_at: j.created_at.toISOString(),
    started_at: j.started_at?.toISOString() ?? null,
    finished_at: j.finished_at?.toISOString() ?? null,
  };
}

export function createReprice(deps: RepriceDeps) {
  /** One execution priced again as record.ts prices it: the same cost, source, price and warnings. */
  async function reprice(projectId: string, row: LedgerRow): Promise<Repriced> {
    const usage = {
      tokensIn: Number(row.tokens_in),
      tokensOut: Number(row.tokens_out),
      cachedIn: Number(row.tokens_cached_in),
      cacheWriteIn: Number(row.tokens_cache_write_in),
      reasoning: Number(row.tokens_reasoning),
      details: detailsOf(row.usage_details),
    };
    const at = new Date(`${row.started_at.replace(' ', 'T')}Z`);
    const price = await deps.prices.resolve(projectId, row.provider, row.model, at, usage.tokensIn);
    // The same rules as at ingest: tiers by the call's input tokens, conditions by its stored context.
    const computed = price ? computeCost(usage, price, contextOf(row.pricing_context)) : undefined;
    const cost = computed?.costUsd ?? '0';
    const source = computed ? 'computed' : 'unpriced';
    const priceId = price?.price_id ?? '';
    const lines = new CostLines();
    lines.add({ source, costNanos: computed?.costNanos ?? 0n, costUsd: cost, computed, price });
    const costLines = lines.toJson();
    const before = nanos(row.cost_usd);
    const same =
      nanos(cost) === before &&
      source === row.cost_source &&
      priceId === row.price_id &&
      costLines === (row.cost_lines ?? '') &&
      (computed ? row.cost_computed_usd !== null && nanos(row.cost_computed_usd) === computed.costNanos : row.cost_computed_usd === null);
    if (same) return { delta: 0n };
    const warnings = [...(computed?.warnings ?? [])];
    if (Number(row.tokens_reasoning) > usage.tokensOut)
      warnings.push(`tokens_reasoning (${row.tokens_reasoning}) exceeds tokens_out (${usage.tokensOut})`);
    return {
      delta: nanos(cost) - before,
      rows: [
        { ...row, sign: -1 },
        {
          ...row,
          cost_usd: cost,
          cost_source: source,
          cost_computed_usd: computed ? computed.costUsd : null,
          price_id: priceId,
          cost_lines: costLines,
          usage_warnings: warnings,
          version: Number(row.version) + 1,
          sign: 1,
          received_at: toClickHouseTime(new Date()),
        },
      ],
    };
  }

  /**
   * Every page of the scope, priced again; `apply` writes each page's corrections before the next.
   * Direct records are priced here (`rows`: their corrections); OTLP executions by assembling
   * their traces again (`traces`: those whose execution changes).
   */
  async function plan(
    projectId: string,
    scope: RepriceScope,
    onPage: (r: { scanned: number; changed: number; delta: bigint; before: bigint; rows: object[]; traces: string[] }) => Promise<void>,
    full: boolean,
  ) {
    let after: { startedAt: string; traceId: string } | undefined;
    for (;;) {
      const { rows: page, end } = await deps.ledger.page(projectId, scope, after, PAGE, full);
      if (!end) return;
      let changed = 0;
      let delta = 0n;
      let before = 0n;
      const rows: object[] = [];
      const otlp = page.filter((row) => row.source === 'otlp').map((row) => row.trace_id);
      const assembled = otlp.length > 0 ? await deps.traces.preview(projectId, otlp) : new Map<string, { before: string; after: string }>();
      for (const [, c] of assembled) {
        changed++;
        delta += nanos(c.after) - nanos(c.before);
      }
      for (const row of page) {
        before += nanos(row.cost_usd);
        if (row.source === 'otlp') continue;
        const r = await reprice(projectId, row);
        if (!r.rows) continue;
        changed++;
        delta += r.delta;
        rows.push(...r.rows);
      }
      await onPage({ scanned: page.length, changed, delta, before, rows, traces: [...assembled.keys()] });
      after = end;
    }
  }

  async function run(id: string): Promise<void> {
    const job = await deps.store.getById(id);
    if (!job || job.status === 'done' || job.status === 'failed') return;
    const scope: RepriceScope = {
      from: job.from_at,
      to: job.to_at,
      ...(job.provider !== null ? { provider: job.provider } : {}),
      ...(job.model !== null ? { model: job.model } : {}),
    };
    await deps.store.start(id, await deps.ledger.count(job.project_id, scope));
    let scanned = 0n;
    let wrote = false;
    try {
      await plan(
        job.project_id,
        scope,
        async (p) => {
          await deps.ledger.write(p.rows);
          await deps.traces.reassemble(p.traces.map((traceId) => ({ projectId: job.project_id, traceId })));
          wrote ||= p.rows.length > 0 || p.traces.length > 0;
          scanned += BigInt(p.scanned);
          await deps.store.progress(id, scanned, p.changed, usd(p.delta));
        },
        true,
      );
    } finally {
      if (wrote) deps.onSpendMoved?.(job.project_id);
    }
    await deps.store.finish(id, 'done');
  }

  return {
    /** How many executions of the scope would change, and the spend before and after. */
    async dryRun(projectId: string, input: RepriceInput) {
      const scope = parseScope(input);
      let scanned = 0;
      let changed = 0;
      let before = 0n;
      let delta = 0n;
      await plan(
        projectId,
        scope,
        async (p) => {
          scanned += p.scanned;
          changed += p.changed;
          before += p.before;
          delta += p.delta;
        },
        false,
      );
      return {
        dry_run: true,
        provider: scope.provider ?? null,
        model: scope.model ?? null,
        from: scope.from.toISOString(),
        to: scope.to.toISOString(),
        executions_scanned: scanned,
        executions_changed: changed,
        spend_before_usd: usd(before),
        spend_after_usd: usd(before + delta),
        spend_delta_usd: usd(delta),
      };
    },

    /** A queued job (409 while another of the project's is unfinished). */
    async start(projectId: string, input: RepriceInput, requestedBy: string) {
      const scope = parseScope(input);
      const job = await deps.store.create(projectId, scope, requestedBy);
      if (!job) throw conflict('a repricing job of this project is still running; wait for it (GET .../reprice/{id})');
      await deps.jobs.enqueue(REPRICE_JOB, { id: job.reprice_id }, { jobId: `reprice-${job.reprice_id}` });
      return presentJob(job);
    },

    async get(projectId: string, id: string) {
      const job = await deps.store.get(projectId, id);
      if (!job) throw notFound('Repricing job');
      return presentJob(job);
    },

    processor: {
      name: REPRICE_JOB,
      attempts: 5,
      backoffMs: 2_000,
      async process(data: { id: string }, ctx) {
        try {
          await run(String(data.id));
        } catch (err) {
          // The last attempt records the failure; earlier ones are retried (a run is idempotent).
          if (ctx.attempt >= 5) await deps.store.finish(String(data.id), 'failed', (err as Error).message);
          throw err;
        }
      },
    } as JobProcessor<{ id: string }>,

    /** At boot: jobs a stop left unfinished run again (in-process jobs die with their process). */
    async resume(runner: Pick<JobRunner, 'enqueue'>): Promise<void> {
      for (const job of await deps.store.unfinished())
        await runner.enqueue(REPRICE_JOB, { id: job.reprice_id }, { jobId: `reprice-${job.reprice_id}` });
    },
  };
}

export type Reprice = ReturnType<typeof createReprice>;
