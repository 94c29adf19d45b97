// planTraceScores (src/scores/score-stamps.ts): the one rule behind writing, deleting and
// restamping scores. Every live score carries its execution's current stamp, one score per trace
// and name is counted, and nothing is written for a score whose rollup sums would not change.
import { describe, expect, it } from 'vitest';
import { NO_STAMP, planTraceScores, type StampedScore } from '../../src/scores/score-stamps.ts';
import type { ExecutionStamp } from '../../src/executions/execution-stamp-repository.ts';
import type { ScoreRow } from '../../src/scores/score.ts';

const row = (id: string, name = 'q', value = 1, trace = 't1'): ScoreRow => ({
  project_id: 'p',
  id,
  trace_id: trace,
  span_id: '',
  session_id: '',
  name,
  data_type: 'NUMERIC',
  value,
  label: '',
  comment: '',
  source: 'api',
  author: 'a',
  config_id: '',
  created_at: '2026-11-25 00:00:00.000',
  updated_at: '2026-11-25 00:00:00.000',
});
const stamp = (model: string, version = '1'): ExecutionStamp => ({
  ...NO_STAMP,
  exec_version: version,
  exec_hour: '2026-11-25 10:00:00',
  exec_model: model,
});
const stored = (r: ScoreRow, s: ExecutionStamp, counted: number, version = '5'): StampedScore => ({ ...r, ...s, counted, version });
let v = 100;
const next = () => ++v;

describe('planTraceScores', () => {
  it('a new score takes its execution stamp and is counted; a second of the same name is not', () => {
    const writes = planTraceScores(
      new Map(),
      new Map([
        ['a', row('a')],
        ['b', row('b')],
      ]),
      new Set(['a', 'b']),
      new Map([['t1', stamp('m1')]]),
      next,
    );
    expect(writes.map((w) => [w.id, w.sign, w.counted, w.exec_model])).toEqual([
      ['a', 1, 1, 'm1'],
      ['b', 1, 0, 'm1'],
    ]);
  });

  it('without an execution the score is written unstamped; once it is known the score is restamped', () => {
    const [w] = planTraceScores(new Map(), new Map([['a', row('a')]]), new Set(['a']), new Map(), next);
    expect(w).toMatchObject({ exec_version: '0', counted: 1, sign: 1 });
    const s = stored(row('a'), NO_STAMP, 1);
    const writes = planTraceScores(new Map([['a', s]]), new Map([['a', row('a')]]), new Set(), new Map([['t1', stamp('m1')]]), next);
    expect(writes.map((x) => [x.sign, x.exec_model, x.version])).toEqual([
      [-1, '', '5'],
      [1, 'm1', v],
    ]);
  });

  it('nothing is written when the stamp is current, even for a new version of the execution (a repricing)', () => {
    const s = stored(row('a'), stamp('m1', '1'), 1);
    expect(planTraceScores(new Map([['a', s]]), new Map([['a', row('a')]]), new Set(), new Map([['t1', stamp('m1', '2')]]), next)).toEqual(
      [],
    );
  });

  it('an execution moved to another model moves its scores: cancel rows with the old stamp, new rows with the new', () => {
    const a = stored(row('a'), stamp('m1'), 1);
    const b = stored(row('b', 'other'), stamp('m1'), 1);
    const writes = planTraceScores(
      new Map([
        ['a', a],
        ['b', b],
      ]),
      new Map([
        ['a', row('a')],
        ['b', row('b', 'other')],
      ]),
      new Set(),
      new Map([['t1', stamp('m2', '2')]]),
      next,
    );
    expect(writes.map((x) => [x.id, x.sign, x.exec_model, x.counted])).toEqual([
      ['a', -1, 'm1', 1],
      ['a', 1, 'm2', 1],
      ['b', -1, 'm1', 1],
      ['b', 1, 'm2', 1],
    ]);
  });

  it('deleting the counted score hands the count to another score of the trace and name', () => {
    const a = stored(row('a'), stamp('m1'), 1);
    const b = stored(row('b'), stamp('m1'), 0);
    const writes = planTraceScores(
      new Map([
        ['a', a],
        ['b', b],
      ]),
      new Map([['b', row('b')]]),
      new Set(),
      new Map([['t1', stamp('m1')]]),
      next,
    );
    expect(writes.map((x) => [x.id, x.sign, x.counted])).toEqual([
      ['a', -1, 1],
      ['b', -1, 0],
      ['b', 1, 1],
    ]);
  });

  it('the counted score keeps its count through an update; a score moved to another name is counted there', () => {
    const a = stored(row('a'), stamp('m1'), 1);
    const b = stored(row('b'), stamp('m1'), 0);
    const writes = planTraceScores(
      new Map([
        ['a', a],
        ['b', b],
      ]),
      new Map([
        ['a', row('a', 'q', 7)],
        ['b', row('b', 'z')],
      ]),
      new Set(['a', 'b']),
      new Map([['t1', stamp('m1')]]),
      next,
    );
    expect(writes.map((x) => [x.id, x.sign, x.name, x.value, x.counted])).toEqual([
      ['a', -1, 'q', 1, 1],
      ['a', 1, 'q', 7, 1],
      ['b', -1, 'q', 1, 0],
      ['b', 1, 'z', 1, 1],
    ]);
  });

  it("a session's score is never stamped nor counted", () => {
    const s = { ...row('s'), trace_id: '', session_id: 'sess' };
    const [w] = planTraceScores(new Map(), new Map([['s', s]]), new Set(['s']), new Map([['t1', stamp('m1')]]), next);
    expect(w).toMatchObject({ exec_version: '0', counted: 0 });
  });
});
