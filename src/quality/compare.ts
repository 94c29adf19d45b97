// "Is version 7 better, and what does it cost?" (GET …/prompts/{prompt_id}/compare; docs/scores.md,
// "Comparing versions"): two versions of a prompt (or two labels it was fetched by, for A/B splits
// served by labels), each with its executions, exact cost, cost per execution, latency, tokens and,
// per score name, the mean with its 95 % interval (NUMERIC), the rate with its Wilson interval
// (BOOLEAN) or the label counts (CATEGORICAL); then, for the pair, the difference of each with its
// interval and test (Welch's t-test for means, the two-proportion z-test for rates) and a sentence.
import { roundFigure, roundSignificant } from '../decimal.ts';
import { badRequest } from '../errors.ts';
import type { PromptGroupCostRead } from '../executions/prompt-group-repository.ts';
import type { GroupScoreRow } from '../scores/score-aggregate-repository.ts';
import type { PromptGroupBy, PromptGroupRead } from '../reads/prompt-groups.ts';
import { average, nanos, usd } from '../spend/money.ts';
import { dayWindow } from '../spend/window.ts';
import { toClickHouseTime } from '../time.ts';
import { meanInterval, proportion, twoProportionZTest, verdict, welchTTest, type Interval } from './statistics.ts';

export interface CompareQuery {
  /** Repeated or comma-separated. */
  versions?: string[];
  labels?: string[];
  start?: string;
  end?: string;
  scores?: string[];
}

export type ScoreSummary =
  | { data_type: 'NUMERIC'; n: number; scored_executions: number; mean: number; ci: Interval | null }
  | { data_type: 'BOOLEAN'; n: number; scored_executions: number; rate: number; ci: Interval | null }
  | { data_type: 'CATEGORICAL'; n: number; scored_executions: number; labels: Record<string, number> };

/** A statistic as the answers show it: `digits` decimals (roundFigure), null for what is not a finite number. */
export const round = (x: number | null | undefined, digits = 6) =>
  x === null || x === undefined || !Number.isFinite(x) ? null : roundFigure(x, digits);
/** A p-value as the answers show it: 10 significant digits (its computed precision; no 0.10937499999999979). */
export const roundP = (p: number | null) => (p === null || !Number.isFinite(p) ? null : roundSignificant(p, 10));
export const roundInterval = (ci: Interval | null) => (ci ? { low: round(ci.low)!, high: round(ci.high)! } : null);

function summary(r: GroupScoreRow): ScoreSummary {
  const n = Number(r.n);
  const scored = Number(r.scored);
  if (r.data_type === 'CATEGORICAL') {
    const [labels, counts] = r.labels;
    return {
      data_type: r.data_type,
      n,
      scored_executions: scored,
      labels: Object.fromEntries(labels.map((l, i) => [l, Number(counts[i])])),
    };
  }
  if (r.data_type === 'BOOLEAN') {
    const p = proportion(Math.round(r.total), n);
    return { data_type: r.data_type, n, scored_executions: scored, rate: round(p.rate)!, ci: roundInterval(p.ci) };
  }
  return {
    data_type: r.data_type,
    n,
    scored_executions: scored,
    mean: round(r.mean)!,
    ci: roundInterval(meanInterval(n, r.mean, r.variance ?? NaN)),
  };
}

export interface ComparisonDeps {
  /** Per group: executions, exact cost, its spread, latency, tokens (executions/prompt-group-repository.ts). */
  costs(read: PromptGroupRead): Promise<PromptGroupCostRead>;
  /** Per group and score name, from the score rollup (scores/score-repository.ts groupScores); `names` narrows. */
  scores(read: PromptGroupRead, names: string[] | undefined): Promise<GroupScoreRow[]>;
  now(): Date;
}

export function createComparison(deps: ComparisonDeps) {
  return {
    /** The caller checks that the prompt exists in the project (404 otherwise). */
    async compare(projectId: string, promptId: string, q: CompareQuery) {
      const split = (v: string[] | undefined) =>
        v
          ?.flatMap((x) => x.split(','))
          .map((x) => x.trim())
          .filter(Boolean);
      const by: PromptGroupBy = q.labels ? 'label' : 'version';
      const groups = by === 'label' ? split(q.labels) : split(q.versions)?.map((v) => String(Number(v)));
      const names = split(q.scores);
      if (!groups || (q.labels && q.versions))
        throw badRequest('versions: give two versions (versions=6,7) or two labels (labels=production,staging)');
      if (groups.length !== 2)
        throw badRequest(`${by === 'label' ? 'labels' : 'versions'}: give exactly two to compare, got ${groups.length}`);
      if (groups[0] === groups[1]) throw badRequest(`${by === 'label' ? 'labels' : 'versions'}: give two different ones`);
      const w = dayWindow(q, deps.now());
      const read: PromptGroupRead = { projectId, promptId, by, start: toClickHouseTime(w.start), end: toClickHouseTime(w.end), groups };
      const [{ rows: costs, quantiles }, scores] = await Promise.all([
        deps.costs(read),
        deps.scores(read, names?.length ? names : undefined),
      ]);
      const name = (g: string) => (by === 'version' ? `v${g}` : g);
      const shaped = groups.map((g) => {
        const c = costs.find((r) => r.grp === g);
        const n = BigInt(c?.executions ?? 0);
        const total = nanos(c?.cost);
        const mean = average(total, n);
        return {
          key: g,
          out: {
            ...(by === 'version' ? { version: Number(g) } : { label: g }),
            executions: Number(n),
            cost: {
              total_usd: usd(total),
              per_execution: {
                mean_usd: n > 0n ? usd(mean) : null,
                p50_usd: n > 0n ? round(c?.cost_q[0], 9) : null,
                p95_usd: n > 0n ? round(c?.cost_q[1], 9) : null,
              },
            },
            latency_ms: { p50: n > 0n ? round(c?.latency_q[0], 1) : null, p95: n > 0n ? round(c?.latency_q[1], 1) : null },
            tokens: { in: Number(c?.tokens_in ?? 0), out: Number(c?.tokens_out ?? 0) },
            scores: Object.fromEntries(scores.filter((s) => s.grp === g).map((s) => [s.name, summary(s)])) as Record<string, ScoreSummary>,
          },
          moments: { n: Number(n), mean: n > 0n ? usd(mean) : 0, variance: c?.cost_var ?? NaN },
        };
      });
      const [a, b] = shaped as [(typeof shaped)[0], (typeof shaped)[0]];
      const costTest = welchTTest(a.moments, b.moments);
      const costOf = { a: a.moments.mean, b: b.moments.mean, test: costTest };
      const scoreComparisons: Record<string, unknown> = {};
      for (const scoreName of [...new Set(scores.map((s) => s.name))].sort()) {
        const sa = scores.find((s) => s.grp === a.key && s.name === scoreName);
        const sb = scores.find((s) => s.grp === b.key && s.name === scoreName);
        const type = (sa ?? sb)!.data_type;
        if (type === 'CATEGORICAL') continue; // label counts: no single difference to test
        const result =
          type === 'BOOLEAN'
            ? twoProportionZTest(
                { successes: Math.round(sa?.total ?? 0), n: Number(sa?.n ?? 0) },
                { successes: Math.round(sb?.total ?? 0), n: Number(sb?.n ?? 0) },
              )
            : welchTTest(
                { n: Number(sa?.n ?? 0), mean: sa?.mean ?? 0, variance: sa?.variance ?? NaN },
                { n: Number(sb?.n ?? 0), mean: sb?.mean ?? 0, variance: sb?.variance ?? NaN },
              );
        scoreComparisons[scoreName] = {
          ...result,
          difference: round(result.difference),
          ci: roundInterval(result.ci),
          p_value: roundP(result.p_value),
          verdict: verdict({
            result,
            a: name(a.key),
            b: name(b.key),
            cost: costOf,
            counts: { a: Number(sa?.n ?? 0), b: Number(sb?.n ?? 0) },
          }).sentence,
        };
      }
      return {
        prompt_id: promptId,
        by,
        window: { start: w.start.toISOString(), end: w.end.toISOString() },
        quantiles,
        groups: shaped.map((s) => s.out),
        comparison: {
          cost_per_execution: {
            ...costTest,
            difference: round(costTest.difference, 9),
            p_value: roundP(costTest.p_value),
            ci: costTest.ci ? { low: round(costTest.ci.low, 9)!, high: round(costTest.ci.high, 9)! } : null,
            relative: a.moments.mean > 0 ? round(b.moments.mean / a.moments.mean - 1, 4) : null,
            verdict: verdict({
              result: costTest,
              a: name(a.key),
              b: name(b.key),
              measure: 'cost_usd',
              counts: { a: a.moments.n, b: b.moments.n },
            }).sentence,
          },
          scores: scoreComparisons,
        },
      };
    },
  };
}

export type Comparison = ReturnType<typeof createComparison>;
