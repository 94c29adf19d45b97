// Spend breakdowns (GET .../spend): cost, executions and tokens grouped by time, metadata.<key> and
// any of the spend dimensions (src/reads/spend-dimensions.ts: provider, model, agent, user,
// session, API key, environment, tag, prompt), each also a filter. Read from the rollup by grain
// whose family holds what is asked (schema/clickhouse/018: months, days and hours covering the
// window), else from the hourly rollup that holds it (006, 008); metadata and dimensions of
// different rollups together from the signed executions rows (docs/spend.md, "Breakdowns").
// Money: nano-dollar BigInts, decimal strings out.
import { badRequest } from '../errors.ts';
import { fromScaled, NANOS } from '../decimal.ts';
import { EPOCH, parseTime } from '../time.ts';
import { nanos } from './money.ts';
import type { SpendRollupRepository } from './spend-rollup-repository.ts';
import type { BreakdownFilter, BreakdownRead, BreakdownRow, BreakdownSource, GroupColumn } from '../reads/breakdown-sql.ts';
import {
  dimensionByColumn,
  dimensionByName,
  SPEND_DIMENSIONS,
  SPEND_ROLLUPS,
  type DimensionFilter,
  type SpendRollup,
} from '../reads/spend-dimensions.ts';
import { coverWindow, grainsFor } from '../reads/spend-grains.ts';
import { MAX_WINDOW_DAYS } from './window.ts';
import type { KeyedScoreRow } from '../scores/score-aggregate-repository.ts';

export type Granularity = 'hour' | 'day' | 'week' | 'month';

export type BreakdownQuery = {
  group_by?: string[];
  window?: string;
  start?: string;
  end?: string;
  granularity?: Granularity;
  limit?: number;
  /** Score names: per group, their mean, true-rate or label counts and how many executions were scored */
  scores?: string[];
  /** `metadata.<key>` filters arrive as such parameters */
  [metadataFilter: `metadata.${string}`]: string | string[] | undefined;
} & { [filter in DimensionFilter]?: string[] };

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const DEFAULT_LIMIT = 100;
const MAX_METADATA_KEY = 256;

const TIME_DIMENSIONS = ['time', 'hour', 'day', 'week', 'month'] as const;
const KNOWN = [...TIME_DIMENSIONS, ...SPEND_DIMENSIONS.map((d) => d.name), 'metadata.<key>'];

type GroupColumnName = Extract<GroupColumn, { kind: 'column' }>['column'];

interface Dimension {
  /** the name as given in group_by: the key of the value in each row */
  name: string;
  group: GroupColumn;
}

/** Comma-separated or repeated values, trimmed, empty ones dropped. */
const split = (values: string[] | undefined) =>
  (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);

function parseDimensions(groupBy: string[] | undefined, granularity: Granularity | undefined): Dimension[] {
  const dims: Dimension[] = [];
  let time: string | undefined;
  for (const name of split(groupBy)) {
    if (dims.some((d) => d.name === name)) throw badRequest(`group_by: "${name}" is given twice`);
    if ((TIME_DIMENSIONS as readonly string[]).includes(name)) {
      if (time) throw badRequest(`group_by: "${time}" and "${name}" are both time dimensions; give one (its bucket is granularity)`);
      time = name;
      const bucket = name === 'time' ? (granularity ?? 'day') : (name as Granularity);
      if (name !== 'time' && granularity && granularity !== bucket)
        throw badRequest(`granularity: "${granularity}" contradicts group_by "${name}"`);
      dims.push({ name, group: { kind: 'time', bucket } });
    } else if (name.startsWith('metadata.')) {
      const key = name.slice('metadata.'.length);
      if (!key || key.length > MAX_METADATA_KEY)
        throw badRequest(`group_by: "${name}" needs a metadata key of 1 to ${MAX_METADATA_KEY} characters`);
      dims.push({ name, group: { kind: 'metadata', key } });
    } else if (dimensionByName(name)) {
      dims.push({ name, group: { kind: 'column', column: dimensionByName(name)!.column as GroupColumnName } });
    } else {
      throw badRequest(`group_by: unknown dimension "${name}"; known: ${KNOWN.join(', ')}`);
    }
  }
  if (dims.length > 6) throw badRequest('group_by: at most 6 dimensions');
  return dims;
}

function parseFilter(q: BreakdownQuery): BreakdownFilter {
  const filter: BreakdownFilter = { anyOf: {}, metadata: {} };
  for (const d of SPEND_DIMENSIONS) {
    // A comma is part of a tag (as in the executions list); other values may be comma-separated.
    const given = q[d.filter];
    const values = d.commaSeparated ? split(given) : (given ?? []).map((t) => t.trim()).filter(Boolean);
    if (values.length) filter.anyOf[d.column] = values;
  }
  for (const [param, value] of Object.entries(q)) {
    if (!param.startsWith('metadata.')) continue;
    const key = param.slice('metadata.'.length);
    if (!key || key.length > MAX_METADATA_KEY) throw badRequest(`${param}: needs a metadata key of 1 to ${MAX_METADATA_KEY} characters`);
    const values = Array.isArray(value) ? value : [value ?? ''];
    if (values.length !== 1) throw badRequest(`${param}: give one value`);
    filter.metadata[key] = String(values[0]);
  }
  return filter;
}

/** [start, end) on whole UTC hours: `window` (e.g. 24h, 7d: ending at the next whole hour or day) or start/end. */
export function hourWindow(q: Pick<BreakdownQuery, 'window' | 'start' | 'end'>, now: Date): { start: Date; end: Date } {
  if (q.window !== undefined && (q.start !== undefined || q.end !== undefined))
    throw badRequest('window: cannot be combined with start or end');
  let start: number;
  let end: number;
  if (q.window !== undefined) {
    const m = /^([1-9]\d{0,5})([hd])$/.exec(q.window);
    if (!m) throw badRequest(`window: must be a number of hours or days such as 24h or 30d, got ${JSON.stringify(q.window)}`);
    const unit = m[2] === 'h' ? HOUR_MS : DAY_MS;
    end = Math.floor(now.getTime() / unit) * unit + unit;
    start = end - Number(m[1]) * unit;
  } else {
    const endRaw = q.end !== undefined ? parseTime(q.end, 'end') : undefined;
    const startRaw = q.start !== undefined ? parseTime(q.start, 'start') : undefined;
    if (startRaw && endRaw && startRaw >= endRaw) throw badRequest('start: must be before end');
    end = endRaw ? Math.ceil(endRaw.getTime() / HOUR_MS) * HOUR_MS : Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS;
    if (end <= 0) throw badRequest(`end: must be after ${EPOCH}, got ${JSON.stringify(q.end)}`);
    // A window never reaches before the epoch (the engine's times start there).
    start = startRaw ? Math.floor(startRaw.getTime() / HOUR_MS) * HOUR_MS : Math.max(0, end - 30 * DAY_MS);
  }
  if (start >= end) throw badRequest('start: must be before end');
  if (end - start > MAX_WINDOW_DAYS * DAY_MS) throw badRequest(`window: at most ${MAX_WINDOW_DAYS} days`);
  return { start: new Date(start), end: new Date(end) };
}

/**
 * Which table answers: the rollup that holds every dimension grouped or filtered (spend_hourly's
 * are in each rollup). A rollup of an array dimension (tag, prompt) counts an execution once per
 * value, so it is exact when that dimension is grouped or filtered by one value. Metadata, a
 * dimension no rollup holds, dimensions of two different rollups (tag with prompt, the API key with
 * a tag), or "any of several tags" without grouping by tag, read the executions rows.
 */
export function sourceOf(groups: GroupColumn[], filter: BreakdownFilter): BreakdownSource {
  if (groups.some((g) => g.kind === 'metadata') || Object.keys(filter.metadata).length > 0) return 'executions';
  const grouped = new Set<string>(groups.flatMap((g) => (g.kind === 'column' ? [g.column] : [])));
  const filtered = Object.entries(filter.anyOf).filter(([, v]) => (v?.length ?? 0) > 0);
  const used = new Set<string>([...grouped, ...filtered.map(([c]) => c)]);
  const rollups = new Set<BreakdownSource>();
  for (const column of used) {
    const d = dimensionByColumn(column)!;
    if (d.rollup === null) return 'executions';
    if (d.rollup !== 'spend_hourly') rollups.add(d.rollup);
    const exact = grouped.has(column) || (filter.anyOf[column as keyof BreakdownFilter['anyOf']]?.length ?? 0) === 1;
    if (d.fromArray && !exact) return 'executions';
  }
  if (rollups.size > 1) return 'executions';
  return [...rollups][0] ?? 'spend_hourly';
}

/**
 * The rollup by grain that answers (SPEND_ROLLUPS, the smallest first): the first whose columns
 * hold every dimension grouped or filtered, with at most one array dimension (tag, prompt) grouped
 * or filtered by one value, as for sourceOf; then the cover of the window by the grains the time
 * grouping allows (a month row cannot be split into days). One metadata key grouped or filtered,
 * with time alone, reads the family of metadata.
 */
export function planOf(
  groups: GroupColumn[],
  filter: BreakdownFilter,
  window: { start: Date; end: Date },
): BreakdownRead['grains'] | undefined {
  const grouped = new Set<string>(groups.flatMap((g) => (g.kind === 'column' ? [g.column] : [])));
  const filtered = Object.entries(filter.anyOf).filter(([, v]) => (v?.length ?? 0) > 0);
  const used = new Set<string>([...grouped, ...filtered.map(([c]) => c)]);
  const time = groups.find((g) => g.kind === 'time');
  const keys = new Set([...groups.flatMap((g) => (g.kind === 'metadata' ? [g.key] : [])), ...Object.keys(filter.metadata)]);
  if (keys.size > 0) {
    // The family of metadata holds one key's values with time alone; a filter by '' (the key
    // absent, or empty) is the total minus the key's other values: read from the executions rows.
    if (keys.size > 1 || used.size > 0 || Object.values(filter.metadata).includes('')) return undefined;
    const rollup = SPEND_ROLLUPS.find((f) => 'metadata' in f)!;
    const grains = grainsFor(time?.kind === 'time' ? time.bucket : undefined, rollup.grains);
    return { rollup, ranges: coverWindow(window.start.getTime(), window.end.getTime(), grains) };
  }
  for (const column of used) {
    const d = dimensionByColumn(column)!;
    const exact = grouped.has(column) || (filter.anyOf[column as keyof BreakdownFilter['anyOf']]?.length ?? 0) === 1;
    if (d.fromArray && !exact) return undefined;
  }
  const rollup: SpendRollup | undefined = SPEND_ROLLUPS.find((f) => [...used].every((c) => (f.columns as readonly string[]).includes(c)));
  if (!rollup) return undefined;
  const grains = grainsFor(time?.kind === 'time' ? time.bucket : undefined, rollup.grains);
  return { rollup, ranges: coverWindow(window.start.getTime(), window.end.getTime(), grains) };
}

const dec = (n: bigint) => fromScaled(n, NANOS);
const chTime = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

function measures(cost: string, executions: string, tokensIn: string, tokensOut: string, unpriced: string) {
  return {
    cost_usd: dec(nanos(cost)),
    executions: Number(executions),
    tokens_in: Number(tokensIn),
    tokens_out: Number(tokensOut),
    unpriced_executions: Number(unpriced),
  };
}

/** Reads a breakdown from one source. */
type BreakdownReader = Pick<SpendRollupRepository, 'breakdown'>;

/**
 * The live scores named `names` of a breakdown's executions (`read`: its groups, filter, window
 * and the source its spend is read from), by group and name (src/compose/spend.ts: a score rollup,
 * or the scores joined to the executions rows).
 */
export type ScoresByGroup = (read: BreakdownRead, names: string[]) => Promise<KeyedScoreRow[]>;

type ScoreSummary = {
  data_type: string;
  /** executions with at least one score of the name */
  scored_executions: number;
  /** scores */
  n: number;
  mean?: number;
  true_rate?: number;
  labels?: Record<string, number>;
};

/** A group's scores of one name, or several groups' added up (the `other` row): sums, counts and label counts. */
interface ScoreSums {
  data_type: string;
  n: number;
  scored: number;
  total: number;
  labels: Map<string, number>;
}

function sumsOf(r: KeyedScoreRow): ScoreSums {
  const [labels, counts] = r.labels;
  const n = Number(r.n);
  return {
    data_type: r.data_type,
    n,
    scored: Number(r.scored),
    total: r.data_type === 'NUMERIC' ? r.mean * n : r.total,
    labels: new Map(labels.map((l, i) => [l, Number(counts[i])])),
  };
}

function addSums(a: ScoreSums | undefined, b: ScoreSums): ScoreSums {
  if (!a) return { ...b, labels: new Map(b.labels) };
  const labels = new Map(a.labels);
  for (const [l, c] of b.labels) labels.set(l, (labels.get(l) ?? 0) + c);
  return { data_type: a.data_type, n: a.n + b.n, scored: a.scored + b.scored, total: a.total + b.total, labels };
}

const round6 = (x: number) => Number(x.toFixed(6));

function present(s: ScoreSums): ScoreSummary {
  const base = { data_type: s.data_type, scored_executions: s.scored, n: s.n };
  if (s.data_type === 'NUMERIC') return { ...base, mean: round6(s.total / s.n) };
  if (s.data_type === 'BOOLEAN') return { ...base, true_rate: round6(s.total / s.n) };
  return { ...base, labels: Object.fromEntries([...s.labels].sort(([x], [y]) => (x < y ? -1 : 1))) };
}

export function createBreakdowns(rollups: BreakdownReader, executions: BreakdownReader, now: () => Date, scoresOf?: ScoresByGroup) {
  const readFrom = (r: BreakdownRead) => (r.source === 'executions' && !r.grains ? executions : rollups).breakdown(r);
  return {
    async breakdown(projectId: string, q: BreakdownQuery) {
      const dims = parseDimensions(q.group_by, q.granularity);
      const filter = parseFilter(q);
      const w = hourWindow(q, now());
      const limit = q.limit ?? DEFAULT_LIMIT;
      const groups = dims.map((d) => d.group);
      const scoreNames = [...new Set(split(q.scores))];
      if (scoreNames.length > 20) throw badRequest(`scores: at most 20 score names, got ${scoreNames.length}`);
      if (scoreNames.some((n) => n.length > 200)) throw badRequest('scores: a score name has at most 200 characters');
      const readOf = (g: GroupColumn[], n: number): BreakdownRead => ({
        projectId,
        source: sourceOf(g, filter),
        start: chTime(w.start),
        end: chTime(w.end),
        groups: g,
        filter,
        limit: n,
        grains: planOf(g, filter, w),
      });
      const read = (g: GroupColumn[], n: number) => readFrom(readOf(g, n));
      // The scores of the groups' live executions (every group, for the `other` row), and of all of them.
      const scoresBy = (g: GroupColumn[]) =>
        scoreNames.length && scoresOf ? scoresOf(readOf(g, 0), scoreNames) : Promise.resolve(undefined);
      const multiValued = groups.some((g) => g.kind === 'column' && dimensionByColumn(g.column)?.fromArray);
      // Rows of a tag (prompt) breakdown count an execution once per value: the total counts it once.
      const [rows, totals, groupScores, totalScores] = await Promise.all([
        read(groups, limit),
        multiValued ? read([], 1) : undefined,
        scoresBy(groups),
        // An execution is in one group unless tags or prompts are grouped: then the groups' scores add up to the total's.
        groups.length > 0 && multiValued ? scoresBy([]) : undefined,
      ]);
      const keyOf = (r: Record<string, unknown>) => JSON.stringify(groups.map((_, i) => String(r[`g${i}`])));
      const scoresByKey = new Map<string, Map<string, ScoreSums>>();
      let totalOfGroups: Map<string, ScoreSums> | undefined;
      for (const r of groupScores ?? []) {
        let byName = scoresByKey.get(keyOf(r));
        if (!byName) scoresByKey.set(keyOf(r), (byName = new Map()));
        byName.set(r.name, sumsOf(r));
        (totalOfGroups ??= new Map()).set(r.name, addSums(totalOfGroups.get(r.name), sumsOf(r)));
      }
      const shown = (byName: Map<string, ScoreSums> | undefined) =>
        Object.fromEntries(scoreNames.flatMap((n) => (byName?.get(n) ? [[n, present(byName.get(n)!)]] : [])));
      const first: BreakdownRow | undefined = rows[0];
      const groupCount = Number(first?.groups_t ?? 0);
      let restCost = nanos(first?.all_cost_t);
      let restN = BigInt(first?.all_executions_t ?? 0);
      let restIn = BigInt(first?.all_tokens_in_t ?? 0);
      let restOut = BigInt(first?.all_tokens_out_t ?? 0);
      let restUnpriced = BigInt(first?.all_unpriced_t ?? 0);
      const items = rows.map((r) => {
        restCost -= nanos(r.cost_t);
        restN -= BigInt(r.executions_t);
        restIn -= BigInt(r.tokens_in_t);
        restOut -= BigInt(r.tokens_out_t);
        restUnpriced -= BigInt(r.unpriced_t);
        const keys: Record<string, string> = {};
        dims.forEach((d, i) => {
          const v = r[`g${i}`]!;
          keys[d.name] = d.group.kind === 'time' ? new Date(Number(v) * 1000).toISOString() : String(v);
        });
        const scored = scoresByKey.get(keyOf(r));
        scoresByKey.delete(keyOf(r)); // what is left is the `other` row's
        return {
          ...keys,
          ...measures(r.cost_t, r.executions_t, r.tokens_in_t, r.tokens_out_t, r.unpriced_t),
          ...(scoreNames.length ? { scores: shown(scored) } : {}),
        };
      });
      let otherScores: Map<string, ScoreSums> | undefined;
      for (const byName of scoresByKey.values())
        for (const [n, sums] of byName) (otherScores ??= new Map()).set(n, addSums(otherScores.get(n), sums));
      const t = multiValued ? totals?.[0] : first;
      const timeDim = dims.find((d) => d.group.kind === 'time');
      const source = planOf(groups, filter, w) ? 'rollup' : sourceOf(groups, filter);
      return {
        start: w.start.toISOString(),
        end: w.end.toISOString(),
        group_by: dims.map((d) => d.name),
        granularity: timeDim?.group.kind === 'time' ? timeDim.group.bucket : null,
        source: source === 'executions' ? 'executions' : 'rollup',
        total: t
          ? measures(t.all_cost_t, t.all_executions_t, t.all_tokens_in_t, t.all_tokens_out_t, t.all_unpriced_t)
          : measures('0', '0', '0', '0', '0'),
        ...(scoreNames.length
          ? { total_scores: shown(totalScores ? new Map(totalScores.map((r) => [r.name, sumsOf(r)])) : totalOfGroups) }
          : {}),
        groups: groupCount,
        rows: items,
        other:
          groupCount > items.length
            ? {
                groups: groupCount - items.length,
                cost_usd: dec(restCost),
                executions: Number(restN),
                tokens_in: Number(restIn),
                tokens_out: Number(restOut),
                unpriced_executions: Number(restUnpriced),
                ...(scoreNames.length ? { scores: shown(otherScores) } : {}),
              }
            : null,
      };
    },
  };
}

export type Breakdowns = ReturnType<typeof createBreakdowns>;
