// The cover of a window by months, days and hours (src/reads/spend-grains.ts): every hour of
// the window counted exactly once, the cheaper side of each partial bucket chosen.
import { describe, expect, it } from 'vitest';
import { coverWindow, type Grain, type GrainRange } from '../../src/reads/spend-grains.ts';

const H = 3_600_000;
const t = (iso: string) => Date.parse(iso);

/** How many times the cover counts each hour of [from, to): 1 inside the window, 0 outside. */
function hoursCounted(ranges: GrainRange[], from: number, to: number): Map<number, number> {
  const counted = new Map<number, number>();
  for (let h = from; h < to; h += H) counted.set(h, 0);
  for (const r of ranges)
    for (let h = r.from; h < r.to; h += H) {
      if (!counted.has(h)) throw new Error(`hour ${new Date(h).toISOString()} outside the range checked`);
      counted.set(h, counted.get(h)! + r.sign);
    }
  return counted;
}

function expectExact(start: string, end: string, grains: Grain[]) {
  const s = t(start);
  const e = t(end);
  const ranges = coverWindow(s, e, grains);
  const from = Date.UTC(new Date(s).getUTCFullYear(), new Date(s).getUTCMonth() - 1, 1);
  const to = Date.UTC(new Date(e).getUTCFullYear(), new Date(e).getUTCMonth() + 2, 1);
  const wrong = [...hoursCounted(ranges, from, to)].filter(([h, n]) => n !== (h >= s && h < e ? 1 : 0));
  expect(wrong.map(([h, n]) => `${new Date(h).toISOString()} counted ${n} times`)).toEqual([]);
  for (const r of ranges) {
    expect(r.from).toBeLessThan(r.to);
    if (r.grain === 'day') expect(r.from % (24 * H)).toBe(0);
    if (r.grain === 'month') expect(new Date(r.from).getUTCDate()).toBe(1);
  }
  return ranges;
}

describe('a window covered by months, days and hours', () => {
  it('reads whole months as months and a month nearly whole as the month minus its outside days', () => {
    const ranges = expectExact('2026-08-03T00:00:00Z', '2026-11-01T00:00:00Z', ['month', 'day', 'hour']);
    expect(ranges).toEqual([
      { grain: 'month', from: t('2026-08-01T00:00:00Z'), to: t('2026-09-01T00:00:00Z'), sign: 1 },
      { grain: 'day', from: t('2026-08-01T00:00:00Z'), to: t('2026-08-03T00:00:00Z'), sign: -1 },
      { grain: 'month', from: t('2026-09-01T00:00:00Z'), to: t('2026-11-01T00:00:00Z'), sign: 1 },
    ]);
  });

  it('reads a few days as days and a few hours as hours', () => {
    expect(expectExact('2026-10-10T00:00:00Z', '2026-10-13T00:00:00Z', ['month', 'day', 'hour'])).toEqual([
      { grain: 'day', from: t('2026-10-10T00:00:00Z'), to: t('2026-10-13T00:00:00Z'), sign: 1 },
    ]);
    expect(expectExact('2026-10-10T05:00:00Z', '2026-10-10T08:00:00Z', ['month', 'day', 'hour'])).toEqual([
      { grain: 'hour', from: t('2026-10-10T05:00:00Z'), to: t('2026-10-10T08:00:00Z'), sign: 1 },
    ]);
  });

  it('counts every hour once over windows of every alignment and grain set', () => {
    const starts = ['2026-01-31T23:00:00Z', '2026-02-01T00:00:00Z', '2026-02-14T13:00:00Z', '2026-02-28T01:00:00Z', '2024-02-29T22:00:00Z'];
    const lengths = [1, 5, 23, 24, 25, 24 * 13 + 7, 24 * 31, 24 * 45 + 11, 24 * 90 + 5];
    for (const grains of [['month', 'day', 'hour'], ['day', 'hour'], ['hour']] as Grain[][])
      for (const start of starts)
        for (const hours of lengths) {
          const s = t(start);
          expectExact(start, new Date(s + hours * H).toISOString(), grains);
        }
  });

  it('reads a 90-day window in a handful of buckets', () => {
    const ranges = coverWindow(t('2026-08-02T07:00:00Z'), t('2026-10-31T07:00:00Z'), ['month', 'day', 'hour']);
    const buckets = ranges.reduce((n, r) => n + (r.grain === 'month' ? 1 : (r.to - r.from) / (r.grain === 'day' ? 24 * H : H)), 0);
    expect(buckets).toBeLessThanOrEqual(30);
  });

  it('refuses a window that does not start and end on whole hours', () => {
    expect(() => coverWindow(t('2026-10-10T05:30:00Z'), t('2026-10-11T00:00:00Z'), ['day', 'hour'])).toThrow(/whole hours/);
  });
});
