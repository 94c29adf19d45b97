// The console's number formats (web/src/format.ts), one set for every page: rates as percentages,
// p-values as "< 0.0001" or two significant digits, durations, money, signed differences and
// intervals that say what they are of.
import { describe, expect, it } from 'vitest';
import {
  duration,
  excludesZero,
  figure,
  interval,
  pText,
  pValue,
  rate,
  signedDuration,
  signedFigure,
  signedPoints,
  signedUsd,
  usd,
} from '../../web/src/format.ts';

describe('console number formats', () => {
  it('rates are percentages with one decimal', () => {
    expect(rate(0.708333)).toBe('70.8 %');
    expect(rate(0.7)).toBe('70 %');
    expect(rate(1)).toBe('100 %');
    expect(rate(0)).toBe('0 %');
    expect(rate(null)).toBe('—');
  });

  it('p-values: "< 0.0001" below that, else two significant digits, never float noise', () => {
    expect(pValue(0.10937499999999979)).toBe('0.11');
    expect(pValue(0.00003)).toBe('< 0.0001');
    expect(pValue(0.0001)).toBe('0.0001');
    expect(pValue(0.00123)).toBe('0.0012');
    expect(pValue(0.05)).toBe('0.05');
    expect(pValue(1)).toBe('1');
    expect(pValue(null)).toBe('—');
    expect(pText(0.4132)).toBe('p = 0.41');
    expect(pText(1e-9)).toBe('p < 0.0001');
  });

  it('durations in the unit that reads best', () => {
    expect(duration(1262)).toBe('1.26 s');
    expect(duration(36)).toBe('36 ms');
    expect(duration(0.5)).toBe('500 µs');
    expect(duration(75_000)).toBe('1 min 15 s');
  });

  it('differences carry their sign before the unit; a zero has none', () => {
    expect(signedUsd(0.00002)).toBe('+$0.00002');
    expect(signedUsd(-0.0011)).toBe('−$0.0011');
    expect(signedUsd(0)).toBe('$0.00');
    expect(signedUsd(null)).toBe('—');
    expect(signedFigure(0.08)).toBe('+0.08');
    expect(signedFigure(-0.012345)).toBe('−0.01235');
    expect(signedPoints(0.15)).toBe('+15 points');
    expect(signedPoints(-0.2667)).toBe('−26.7 points');
    expect(signedDuration(-1262)).toBe('−1.26 s');
    expect(signedDuration(36)).toBe('+36 ms');
    expect(usd(0.0012)).toBe('$0.0012');
    expect(figure(0.10937499999999979)).toBe('0.1094');
    expect(figure(-2)).toBe('−2');
  });

  it('an interval says what it is of, and whether it excludes 0', () => {
    expect(interval({ low: -0.01, high: 0.51 }, (x) => signedPoints(x, false), 'the difference of rates', 'points')).toBe(
      '95 % interval of the difference of rates: −1 to +51 points',
    );
    expect(interval(null, signedUsd, 'the difference in cost per item')).toBe(
      'no 95 % interval of the difference in cost per item (too few values or no variation)',
    );
    expect(excludesZero({ low: 0.01, high: 0.51 })).toBe(true);
    expect(excludesZero({ low: -0.01, high: 0.51 })).toBe(false);
    expect(excludesZero(null)).toBe(false);
  });
});
