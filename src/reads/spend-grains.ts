// How a window of whole UTC hours is read from rollups held at several time grains (schema/
// clickhouse/018_spend_grains.sql): a cover of [start, end) by whole months, days and hours, each
// added or subtracted. A partial month is read either as its days (and hours) inside the window,
// or as the month minus its days outside it, whichever reads fewer buckets; a partial day alike
// with hours. Every rollup sum is signed, so a subtraction is exact.

export type Grain = 'hour' | 'day' | 'month';

/** Whole buckets of one grain, [from, to) in epoch milliseconds, added (1) or subtracted (-1). */
export interface GrainRange {
  grain: Grain;
  from: number;
  to: number;
  sign: 1 | -1;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The start of the bucket of grain `g` holding `t`. */
export function bucketStart(t: number, g: Grain): number {
  if (g === 'hour') return Math.floor(t / HOUR_MS) * HOUR_MS;
  if (g === 'day') return Math.floor(t / DAY_MS) * DAY_MS;
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the bucket after the one holding `t`. */
function nextBucket(t: number, g: Grain): number {
  if (g === 'hour') return bucketStart(t, g) + HOUR_MS;
  if (g === 'day') return bucketStart(t, g) + DAY_MS;
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

const ceilTo = (t: number, g: Grain) => (bucketStart(t, g) === t ? t : nextBucket(t, g));

/** Buckets a range reads (months and days count as one each, as hours do: each is one row per group). */
function bucketsOf(r: GrainRange): number {
  if (r.grain === 'hour') return (r.to - r.from) / HOUR_MS;
  if (r.grain === 'day') return (r.to - r.from) / DAY_MS;
  let n = 0;
  for (let t = r.from; t < r.to; t = nextBucket(t, 'month')) n++;
  return n;
}

const cost = (ranges: GrainRange[]) => ranges.reduce((n, r) => n + bucketsOf(r), 0);
const flip = (ranges: GrainRange[]) => ranges.map((r) => ({ ...r, sign: (r.sign === 1 ? -1 : 1) as 1 | -1 }));

/**
 * The cheapest cover of [start, end) (whole hours) by the grains given, coarsest first (the last
 * is 'hour'): ranges whose signed sum is exactly the window.
 */
export function coverWindow(start: number, end: number, grains: readonly Grain[]): GrainRange[] {
  if (start % HOUR_MS !== 0 || end % HOUR_MS !== 0) throw new Error('a window starts and ends on whole hours');
  if (grains[grains.length - 1] !== 'hour') throw new Error('the finest grain of a cover is the hour');
  return cover(start, end, grains);
}

function cover(s: number, e: number, grains: readonly Grain[]): GrainRange[] {
  if (s >= e) return [];
  const [g, ...finer] = grains as [Grain, ...Grain[]];
  if (finer.length === 0) return [{ grain: g, from: s, to: e, sign: 1 }];
  const a = ceilTo(s, g);
  const b = bucketStart(e, g);
  // [s, e) inside one bucket U that it does not fill: its finer cover, or U minus what lies outside.
  if (a > b) return cheaper(cover(s, e, finer), whole(bucketStart(s, g), a, g, s, e, finer));
  const left = s < a ? cheaper(cover(s, a, finer), whole(bucketStart(s, g), a, g, s, a, finer)) : [];
  const right = b < e ? cheaper(cover(b, e, finer), whole(b, nextBucket(b, g), g, b, e, finer)) : [];
  const middle: GrainRange[] = a < b ? [{ grain: g, from: a, to: b, sign: 1 }] : [];
  return [...left, ...middle, ...right];
}

/** The bucket [u0, u1) of grain g minus its parts outside [s, e). */
function whole(u0: number, u1: number, g: Grain, s: number, e: number, finer: readonly Grain[]): GrainRange[] {
  return [{ grain: g, from: u0, to: u1, sign: 1 }, ...flip(cover(u0, s, finer)), ...flip(cover(e, u1, finer))];
}

const cheaper = (x: GrainRange[], y: GrainRange[]) => (cost(y) < cost(x) ? y : x);

/**
 * The grains a read grouped by time bucket `bucket` (none: undefined) may use of those a rollup
 * holds, coarsest first, ending with the hour: a month row cannot be split into days, nor a day
 * into hours.
 */
export function grainsFor(bucket: 'hour' | 'day' | 'week' | 'month' | undefined, held: readonly Grain[]): Grain[] {
  const allowed: Grain[] =
    bucket === 'hour' ? ['hour'] : bucket === 'day' || bucket === 'week' ? ['day', 'hour'] : ['month', 'day', 'hour'];
  return allowed.filter((g) => g === 'hour' || held.includes(g));
}
