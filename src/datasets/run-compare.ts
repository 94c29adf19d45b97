// Two runs of a dataset compared (GET …/datasets/{id}/runs/compare?runs=a,b; docs/datasets.md,
// "Comparing runs"): item by item side by side, and in aggregate with the statistics of the prompt
// version comparison (quality/statistics.ts). Where the same items ran in both, the test is
// paired — the paired t-test for numbers (scores, cost, latency), McNemar's exact test for
// booleans — on the items with a value in both runs; with no such item, the unpaired tests of the
// version comparison (Welch's t-test, the two-proportion z-test). Each result names its test.
import { badRequest } from '../errors.ts';
import { round, roundInterval, roundP } from '../quality/compare.ts';
import {
  mcNemarExactTest,
  pairedTTest,
  twoProportionZTest,
  verdict,
  welchTTestSamples,
  type Measure,
  type McNemarResult,
  type PairedResult,
  type TwoProportionResult,
  type WelchResult,
} from '../quality/statistics.ts';
import { cursor } from './datasets.ts';
import { joinLinks, presentRunItems, runTotals, scoresByItem, type Joined, type RunReadDeps } from './run-results.ts';
import type { RunRepository, StoredRunLink } from './run-repository.ts';
import { presentRun } from './runs.ts';

export type Result = WelchResult | TwoProportionResult | PairedResult | McNemarResult;

export interface Side {
  name: string;
  links: StoredRunLink[];
  joined: Joined;
  /** item id → its execution's cost and latency, for the items whose execution is assembled */
  measures: Map<string, { cost: number; latency: number }>;
}

/** A result as the answer shows it. `cost` (beside a score): each run's mean cost per item and the test of their difference. */
function shaped(
  result: Result,
  a: string,
  b: string,
  measure: Measure,
  counts: { a: number; b: number },
  digits = 6,
  cost?: { a: number; b: number; test: Result },
) {
  return {
    ...result,
    difference: round(result.difference, digits),
    ci: result.ci ? { low: round(result.ci.low, digits)!, high: round(result.ci.high, digits)! } : roundInterval(null),
    p_value: roundP(result.p_value),
    verdict: verdict({ result, a, b, measure, per: 'item', counts, ...(cost ? { cost } : {}) }).sentence,
  };
}

/** Paired t-test over the items with a value in both; Welch's test of all values when none is paired. */
function numeric(a: Map<string, number>, b: Map<string, number>): PairedResult | WelchResult {
  const paired = [...a.keys()].filter((k) => b.has(k));
  if (paired.length > 0) return pairedTTest(paired.map((k) => b.get(k)! - a.get(k)!));
  return welchTTestSamples([...a.values()], [...b.values()]);
}

/** McNemar's exact test over the items judged in both; the two-proportion z-test when none is paired. */
function booleans(a: Map<string, boolean>, b: Map<string, boolean>): McNemarResult | TwoProportionResult {
  const paired = [...a.keys()].filter((k) => b.has(k));
  if (paired.length > 0) {
    const counts = { n: paired.length, both: 0, a_only: 0, b_only: 0 };
    for (const k of paired) {
      const [x, y] = [a.get(k)!, b.get(k)!];
      if (x && y) counts.both++;
      else if (x) counts.a_only++;
      else if (y) counts.b_only++;
    }
    return mcNemarExactTest(counts);
  }
  const trues = (m: Map<string, boolean>) => [...m.values()].filter(Boolean).length;
  return twoProportionZTest({ successes: trues(a), n: a.size }, { successes: trues(b), n: b.size });
}

/** A score's test between two runs: b against a, over the items scored in both when there are any. */
export interface ScoreTest {
  data_type: 'NUMERIC' | 'BOOLEAN';
  result: Result;
  /** how many items of each run have a value of the score, and its mean over them (a rate for booleans; null for none) */
  n_a: number;
  n_b: number;
  mean_a: number | null;
  mean_b: number | null;
}

/** The aggregate statistics of run b against run a (what the comparison answers and release gates judge). */
export interface RunMeasures {
  A: Side;
  B: Side;
  /** items with an assembled execution in both runs */
  paired: number;
  /** each run's mean cost per item (over its items with an execution), and the test of their difference */
  cost: { a: number; b: number; n_a: number; n_b: number; test: Result };
  latency: Result;
  /** per score name (categorical scores left out: label counts have no single difference to test) */
  scores: Map<string, ScoreTest>;
}

export function createRunComparison(deps: { runs: RunRepository; reads: RunReadDeps }) {
  async function side(projectId: string, runId: string, name: string): Promise<Side> {
    const links = await deps.runs.links(projectId, runId);
    const joined = await joinLinks(deps.reads, projectId, links, false);
    const measures = new Map<string, { cost: number; latency: number }>();
    for (const l of links) {
      const e = l.trace_id ? joined.executions.get(l.trace_id) : undefined;
      if (e) measures.set(l.item_id, { cost: Number(e.cost_usd_text), latency: Number(e.latency_ms) });
    }
    return { name, links, joined, measures };
  }

  /** The statistics of run b against run a, both runs of the project (found by the caller). */
  async function measure(
    projectId: string,
    a: { run_id: string; name: string },
    b: { run_id: string; name: string },
  ): Promise<RunMeasures> {
    const [A, B] = await Promise.all([side(projectId, a.run_id, a.name), side(projectId, b.run_id, b.name)]);
    const pick = (s: Side, f: 'cost' | 'latency') => new Map([...s.measures].map(([k, m]) => [k, m[f]]));
    const costA = pick(A, 'cost');
    const costB = pick(B, 'cost');
    const meanOf = (m: Map<string, number>) => (m.size ? [...m.values()].reduce((x, y) => x + y, 0) / m.size : 0);
    const scores = new Map<string, ScoreTest>();
    const sa = scoresByItem(A.links, A.joined);
    const sb = scoresByItem(B.links, B.joined);
    for (const name of [...new Set([...sa.keys(), ...sb.keys()])].sort()) {
      const type = (sa.get(name) ?? sb.get(name))!.data_type;
      if (type === 'CATEGORICAL') continue; // label counts: no single difference to test
      const values = <T>(m: typeof sa, f: (v: number) => T) =>
        new Map([...(m.get(name)?.data_type === type ? m.get(name)!.byItem : new Map())].map(([k, s]) => [k, f(s.value)]));
      const result =
        type === 'BOOLEAN'
          ? booleans(
              values(sa, (v) => v === 1),
              values(sb, (v) => v === 1),
            )
          : numeric(
              values(sa, (v) => v),
              values(sb, (v) => v),
            );
      const [na, nb] = [values(sa, (v) => v), values(sb, (v) => v)];
      const avg = (m: Map<string, number>) => (m.size ? meanOf(m) : null);
      scores.set(name, { data_type: type, result, n_a: na.size, n_b: nb.size, mean_a: avg(na), mean_b: avg(nb) });
    }
    return {
      A,
      B,
      paired: [...A.measures.keys()].filter((k) => B.measures.has(k)).length,
      cost: { a: meanOf(costA), b: meanOf(costB), n_a: costA.size, n_b: costB.size, test: numeric(costA, costB) },
      latency: numeric(pick(A, 'latency'), pick(B, 'latency')),
      scores,
    };
  }

  return {
    measure,

    async compare(projectId: string, datasetId: string, q: { runs: string[]; limit: number; cursor?: string }) {
      const ids = q.runs
        .flatMap((r) => r.split(','))
        .map((r) => r.trim())
        .filter(Boolean);
      // The schema bounds the parameter loosely, so any count is answered here in words.
      if (ids.length !== 2) throw badRequest(`runs: give exactly two run ids separated by a comma (runs=a,b), got ${ids.length}`);
      if (ids[0] === ids[1]) throw badRequest('runs: give two different runs');
      const runs = await Promise.all(ids.map((id) => deps.runs.get(projectId, id, datasetId)));
      const m = await measure(projectId, runs[0]!, runs[1]!);
      const { A, B } = m;
      const scoreTests = Object.fromEntries(
        [...m.scores].map(([name, s]) => [
          name,
          shaped(s.result, A.name, B.name, 'score', { a: s.n_a, b: s.n_b }, 6, { a: m.cost.a, b: m.cost.b, test: m.cost.test }),
        ]),
      );

      // Item by item: the union of both runs' items in dataset order, a page at a time.
      const bySeq = new Map<string, { seq: bigint; a?: StoredRunLink; b?: StoredRunLink }>();
      for (const [key, s] of [
        ['a', A],
        ['b', B],
      ] as const)
        for (const l of s.links) {
          const row = bySeq.get(l.item_id) ?? { seq: BigInt(l.item_seq) };
          row[key] = l;
          bySeq.set(l.item_id, row);
        }
      const after = BigInt(cursor.decode(q.cursor) ?? '0');
      const page = [...bySeq.values()]
        .filter((r) => r.seq > after)
        .sort((x, y) => (x.seq < y.seq ? -1 : 1))
        .slice(0, q.limit);
      const [itemsA, itemsB] = await Promise.all(
        (['a', 'b'] as const).map((k) =>
          presentRunItems(
            deps.reads,
            projectId,
            page.flatMap((r) => (r[k] ? [r[k]] : [])),
          ),
        ),
      );
      const shownA = new Map(itemsA!.map((i) => [i.item_id, i]));
      const shownB = new Map(itemsB!.map((i) => [i.item_id, i]));
      const last = page[page.length - 1];
      return {
        dataset_id: datasetId,
        runs: [
          { ...presentRun(runs[0]!), totals: runTotals(A.links, A.joined) },
          { ...presentRun(runs[1]!), totals: runTotals(B.links, B.joined) },
        ],
        comparison: {
          paired_items: m.paired,
          cost_per_item: shaped(m.cost.test, A.name, B.name, 'cost_usd', { a: m.cost.n_a, b: m.cost.n_b }, 9),
          latency_ms: shaped(m.latency, A.name, B.name, 'latency_ms', { a: m.cost.n_a, b: m.cost.n_b }, 3),
          scores: scoreTests,
        },
        items: page.map((r) => {
          const id = (r.a ?? r.b)!.item_id;
          return { item_id: id, a: shownA.get(id) ?? null, b: shownB.get(id) ?? null };
        }),
        next_cursor: page.length === q.limit && last ? cursor.encode(last.seq.toString()) : null,
      };
    },
  };
}

export type RunComparison = ReturnType<typeof createRunComparison>;
