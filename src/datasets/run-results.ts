// What a run produced (docs/datasets.md, "A run's answer"): each linked item joined, by trace id,
// to its execution (output, exact cost, latency) and its scores at read time — so a link stored
// before its trace was assembled joins once it is — and the totals: items done and failed, exact
// cost, latency p50/p95, and per score name the mean (95 % CI) or rate (Wilson interval) or label
// counts, with the statistics of the prompt version comparison (quality/statistics.ts).
import type { NormalizedMessage } from '../executions/span.ts';
import type { ListRow } from '../executions/present.ts';
import type { StoredScore } from '../scores/score-repository.ts';
import { presentScore } from '../scores/score.ts';
import { round, roundInterval, type ScoreSummary } from '../quality/compare.ts';
import { percentile, proportion, summarize } from '../quality/statistics.ts';
import { average, nanos, usd } from '../spend/money.ts';
import { fromClickHouseTime } from '../time.ts';
import { itemFromConversation } from './datasets.ts';
import type { ItemContent } from './dataset-repository.ts';
import type { StoredRunLink } from './run-repository.ts';

/** Reads at trace volume go in chunks of this many trace ids. */
const CHUNK = 1_000;

export interface RunReadDeps {
  executions: {
    ofTraces(projectId: string, traceIds: string[], withMessages: boolean): Promise<Array<ListRow & { conversation_history?: string }>>;
  };
  scores: { listOfTraces(projectId: string, traceIds: string[]): Promise<StoredScore[]> };
  versionsOf(projectId: string, pairs: Array<{ item_id: string; version: number }>): Promise<Map<string, ItemContent>>;
}

/** One item's execution and its newest score of each name, joined by trace id. */
export interface Joined {
  executions: Map<string, ListRow & { conversation_history?: string }>;
  /** trace id → score name → its newest live score */
  scores: Map<string, Map<string, StoredScore>>;
}

/** The executions and scores of these links, read in chunks. */
export async function joinLinks(
  deps: RunReadDeps,
  projectId: string,
  links: readonly StoredRunLink[],
  withMessages: boolean,
): Promise<Joined> {
  const traces = [...new Set(links.map((l) => l.trace_id).filter((t): t is string => t !== null))];
  const joined: Joined = { executions: new Map(), scores: new Map() };
  for (let i = 0; i < traces.length; i += CHUNK) {
    const ids = traces.slice(i, i + CHUNK);
    const [rows, scores] = await Promise.all([
      deps.executions.ofTraces(projectId, ids, withMessages),
      deps.scores.listOfTraces(projectId, ids),
    ]);
    for (const r of rows) joined.executions.set(r.trace_id, r);
    // Oldest first: a later score of a name replaces an earlier one.
    for (const s of scores) {
      let byName = joined.scores.get(s.trace_id);
      if (!byName) joined.scores.set(s.trace_id, (byName = new Map()));
      byName.set(s.name, s);
    }
  }
  return joined;
}

function outputOf(conversation: string | undefined): unknown {
  if (!conversation) return null;
  try {
    return itemFromConversation(JSON.parse(conversation) as NormalizedMessage[]).output;
  } catch {
    return null;
  }
}

/** A page of a run's items, each with the version it ran, its execution (null until assembled) and scores. */
export async function presentRunItems(deps: RunReadDeps, projectId: string, links: readonly StoredRunLink[]) {
  const [joined, contents] = await Promise.all([
    joinLinks(deps, projectId, links, true),
    deps.versionsOf(
      projectId,
      links.map((l) => ({ item_id: l.item_id, version: l.item_version })),
    ),
  ]);
  return links.map((l) => presentRunItem(l, joined, contents.get(`${l.item_id}:${l.item_version}`)));
}

export function presentRunItem(l: StoredRunLink, joined: Joined, content: ItemContent | undefined) {
  const e = l.trace_id ? joined.executions.get(l.trace_id) : undefined;
  const scores = l.trace_id ? [...(joined.scores.get(l.trace_id)?.values() ?? [])] : [];
  return {
    item_id: l.item_id,
    item_version: l.item_version,
    input: content?.input ?? null,
    expected_output: content?.expected_output ?? null,
    status: l.status,
    error: l.error,
    linked_by: l.linked_by,
    trace_id: l.trace_id,
    execution: e
      ? {
          status: e.status,
          model: e.model,
          output: outputOf(e.conversation_history),
          cost_usd: usd(nanos(e.cost_usd_text)),
          latency_ms: Number(e.latency_ms),
          tokens_in: Number(e.tokens_in),
          tokens_out: Number(e.tokens_out),
          started_at: fromClickHouseTime(e.started_at),
        }
      : null,
    scores: Object.fromEntries(scores.map((s) => [s.name, { value: presentScore(s).value, data_type: s.data_type, score_id: s.id }])),
  };
}

/** Per score name, the one value of each item (its newest score): numbers (1/0 for booleans) or labels. */
export type ItemScores = Map<string, { data_type: StoredScore['data_type']; byItem: Map<string, StoredScore> }>;

export function scoresByItem(links: readonly StoredRunLink[], joined: Joined): ItemScores {
  const out: ItemScores = new Map();
  for (const l of links) {
    if (!l.trace_id) continue;
    for (const [name, s] of joined.scores.get(l.trace_id) ?? []) {
      let entry = out.get(name);
      if (!entry) out.set(name, (entry = { data_type: s.data_type, byItem: new Map() }));
      if (s.data_type === entry.data_type) entry.byItem.set(l.item_id, s);
    }
  }
  return out;
}

export function scoreSummary(dataType: StoredScore['data_type'], scores: readonly StoredScore[]): ScoreSummary {
  const n = scores.length;
  if (dataType === 'CATEGORICAL') {
    const labels: Record<string, number> = {};
    for (const s of scores) labels[s.label] = (labels[s.label] ?? 0) + 1;
    return { data_type: dataType, n, scored_executions: n, labels };
  }
  if (dataType === 'BOOLEAN') {
    const p = proportion(scores.filter((s) => s.value === 1).length, n);
    return { data_type: dataType, n, scored_executions: n, rate: round(p.rate)!, ci: roundInterval(p.ci) };
  }
  const s = summarize(scores.map((x) => x.value));
  return { data_type: dataType, n, scored_executions: n, mean: round(s.mean)!, ci: roundInterval(s.ci) };
}

/** The totals of a run from all its links (light reads: no messages). */
export function runTotals(links: readonly StoredRunLink[], joined: Joined) {
  const found = links.map((l) => (l.trace_id ? joined.executions.get(l.trace_id) : undefined)).filter((e) => e !== undefined);
  let total = 0n;
  for (const e of found) total += nanos(e.cost_usd_text);
  const costs = found.map((e) => Number(e.cost_usd_text));
  const latencies = found.map((e) => Number(e.latency_ms));
  const scores = scoresByItem(links, joined);
  return {
    items: {
      linked: links.length,
      done: links.filter((l) => l.status === 'done').length,
      failed: links.filter((l) => l.status === 'failed').length,
      /** done, but the execution is not assembled (yet) */
      awaiting_execution: links.filter((l) => l.status === 'done' && l.trace_id && !joined.executions.has(l.trace_id)).length,
      executions_with_error: found.filter((e) => e.status === 'error').length,
    },
    cost: {
      total_usd: usd(total),
      per_item: {
        mean_usd: found.length ? usd(average(total, found.length)) : null,
        p50_usd: round(percentile(costs, 0.5), 9),
        p95_usd: round(percentile(costs, 0.95), 9),
      },
    },
    latency_ms: { p50: round(percentile(latencies, 0.5), 1), p95: round(percentile(latencies, 0.95), 1) },
    tokens: { in: found.reduce((n, e) => n + Number(e.tokens_in), 0), out: found.reduce((n, e) => n + Number(e.tokens_out), 0) },
    scores: Object.fromEntries(
      [...scores]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, e]) => [name, scoreSummary(e.data_type, [...e.byItem.values()])]),
    ),
  };
}
