// "Is version b better than a, and what does it cost?": GET .../prompts/<id>/compare for two
// versions (or two labels) over 7/30/90 UTC days. Per group: cost, latency, tokens, score means
// (rates, label counts) with their 95 % intervals; then b against a: each score's tested
// difference and the API's verdict, and the cost per execution. Figures are shown as the API
// sends them (money is never re-summed here). The query string holds by, a, b and days.
import type { ComponentChildren } from 'preact';
import { query } from '../api.ts';
import { duration, int, usd } from '../format.ts';
import { navigate, useLocation, withParams } from '../router.tsx';
import type { CompareGroup, GroupScore, Interval, PromptComparison, PromptWithLatest, TestOutcome } from '../types.ts';
import { Badge, Card, Empty, Load, useApi } from '../ui.tsx';
import { DAYS } from './prompt-tools.tsx';

const TESTS: Record<TestOutcome['test'], string> = { welch_t: "Welch's t-test", two_proportion_z: 'two-proportion z-test' };

/** A figure: four significant digits, no float noise, a true minus sign. */
const fig = (x: number | null | undefined): string =>
  x === null || x === undefined ? '—' : String(Number(x.toPrecision(4))).replace('-', '−');
const rate = (x: number | null | undefined): string => (x === null || x === undefined ? '—' : `${fig(x * 100)} %`);
const interval = (ci: Interval | null, f: (x: number) => string): string => (ci ? `${f(ci.low)} to ${f(ci.high)}` : 'no interval');
const pValue = (p: number | null): string => (p === null ? '—' : p < 0.0001 ? '< 0.0001' : fig(p));
/** A difference in money: its sign before the dollar (−$0.0001, +$0.0002). */
const signedUsd = (x: number): string => (x < 0 ? `−${usd(-x)}` : usd(x));
const groupName = (g: CompareGroup): string => (g.version !== undefined ? `v${g.version}` : (g.label ?? '?'));

export function Compare({ base, p }: { base: string; p: PromptWithLatest }) {
  const loc = useLocation();
  const latest = p.latest_version;
  const labels = Object.keys(p.labels).sort();
  const by = loc.params.get('by') === 'label' ? 'label' : 'version';
  const days = Number(loc.params.get('days')) || 30;
  const pick = (key: 'a' | 'b', fallback: string | undefined) => {
    const v = loc.params.get(key);
    if (by === 'label') return v && labels.includes(v) ? v : fallback;
    return v && Number(v) >= 1 && Number(v) <= latest ? String(Number(v)) : fallback;
  };
  const a = by === 'label' ? pick('a', labels[0]) : pick('a', String(Math.max(1, latest - 1)));
  const b = by === 'label' ? pick('b', labels[1]) : pick('b', String(latest));
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const ready = a !== undefined && b !== undefined && a !== b;
  const cmp = useApi<PromptComparison>(
    ready ? `${base}/compare${query({ [by === 'label' ? 'labels' : 'versions']: `${a},${b}`, start })}` : null,
  );
  const set = (changes: Record<string, string | null>) => navigate(withParams(loc, changes), { replace: true });
  const choices = by === 'label' ? labels : Array.from({ length: latest }, (_, i) => String(latest - i));
  const show = (c: string) => (by === 'label' ? c : `v${c}`);
  const chooser = (key: 'a' | 'b', value: string | undefined) => (
    <select
      name={`compare-${key}`}
      aria-label={key === 'a' ? 'Group A' : 'Group B'}
      value={value}
      onChange={(e) => set({ [key]: (e.target as HTMLSelectElement).value })}
    >
      {choices.map((c) => (
        <option value={c}>{show(c)}</option>
      ))}
    </select>
  );
  return (
    <>
      <Card>
        <div class="inline compare-choice">
          <label>
            Compare
            <select name="compare-by" value={by} onChange={(e) => set({ by: (e.target as HTMLSelectElement).value, a: null, b: null })}>
              <option value="version">versions</option>
              <option value="label">labels (A/B by label)</option>
            </select>
          </label>
          {chooser('a', a)}
          <span>against</span>
          {chooser('b', b)}
          <span class="muted">over the last</span>
          {DAYS.map(([label, n]) => (
            <button type="button" class={n === days ? 'active' : ''} onClick={() => set({ days: n === 30 ? null : String(n) })}>
              {label}
            </button>
          ))}
        </div>
        <p class="muted small">
          Executions are grouped by the {by === 'label' ? 'label they fetched the prompt by' : 'version they used'}; b is tested against a
          (docs/scores.md).
        </p>
      </Card>
      {by === 'label' && labels.length < 2 ? (
        <Empty title="Fewer than two labels">
          <p>An A/B split by labels needs two labels (e.g. production and staging) that agents fetch the prompt by.</p>
        </Empty>
      ) : a === b ? (
        <Empty title="Pick two different ones">
          <p>
            Choose {by === 'label' ? 'two labels' : 'two versions'} to compare{' '}
            {latest === 1 && by === 'version' ? '(this prompt has one version yet)' : ''}.
          </p>
        </Empty>
      ) : (
        <Load state={cmp} label="Comparing…">
          {(c) => <Result c={c} />}
        </Load>
      )}
    </>
  );
}

function Result({ c }: { c: PromptComparison }) {
  const [ga, gb] = c.groups;
  const names = [...new Set([...Object.keys(ga.scores), ...Object.keys(gb.scores)])].sort();
  const cost = c.comparison.cost_per_execution;
  return (
    <>
      <div class="grid two compare">
        {[ga, gb].map((g, i) => (
          <Group g={g} side={i === 0 ? 'a' : 'b'} names={names} estimated={c.quantiles === 'estimated'} />
        ))}
      </div>
      <Card title={`${groupName(gb)} against ${groupName(ga)}`} class="differences">
        {names.length === 0 && (
          <p class="muted">
            No scores on these executions yet: add some on an execution's page, or with POST …/scores. Cost and latency compare anyway.
          </p>
        )}
        {Object.entries(c.comparison.scores).map(([name, t]) => (
          <div class="difference" data-score={name}>
            <p class="verdict">
              <strong>{name}:</strong> {t.verdict}
            </p>
            <TestFacts label={`Difference (${groupName(gb)} − ${groupName(ga)})`} t={t}>
              {t.test === 'two_proportion_z' ? `${fig((t.difference ?? 0) * 100)} points` : fig(t.difference)}{' '}
              <span class="muted">(95 % CI {interval(t.ci, t.test === 'two_proportion_z' ? (x) => fig(x * 100) : fig)})</span>
            </TestFacts>
          </div>
        ))}
        <div class="difference" data-score="cost">
          <h4>Cost per execution</h4>
          <TestFacts label="Difference" t={cost}>
            {cost.difference === null ? '—' : `${cost.difference > 0 ? '+' : ''}${signedUsd(cost.difference)}`}{' '}
            {cost.relative !== null && (
              <strong class="relative">
                ({cost.relative > 0 ? '+' : ''}
                {fig(cost.relative * 100)} %)
              </strong>
            )}{' '}
            <span class="muted">(95 % CI {interval(cost.ci, signedUsd)})</span>
          </TestFacts>
        </div>
      </Card>
      <p class="muted small">
        UTC days {c.window.start.slice(0, 10)} to {new Date(Date.parse(c.window.end) - 86_400_000).toISOString().slice(0, 10)}, both
        included.
      </p>
    </>
  );
}

/** A tested difference: what differs (children), the test, its p-value and whether it is significant. */
function TestFacts({ label, t, children }: { label: string; t: TestOutcome; children: ComponentChildren }) {
  return (
    <dl class="facts">
      <dt>{label}</dt>
      <dd>{children}</dd>
      <dt>Test</dt>
      <dd>
        {TESTS[t.test]}, p = {pValue(t.p_value)} <Significance t={t} />
      </dd>
    </dl>
  );
}

function Significance({ t }: { t: TestOutcome }) {
  if (t.p_value === null) return <Badge>not testable</Badge>;
  return t.significant ? <Badge kind="ok">significant</Badge> : <Badge kind="warn">not significant</Badge>;
}

function Group({ g, side, names, estimated }: { g: CompareGroup; side: 'a' | 'b'; names: string[]; estimated: boolean }) {
  const pe = g.cost.per_execution;
  // Over 100,000 executions the percentiles come from daily samples (the API's `quantiles`).
  const approx = estimated ? '≈ ' : '';
  const sampled = estimated ? 'estimated from daily samples; counts, totals, means and tests are exact' : undefined;
  return (
    <Card title={`${side}: ${groupName(g)}`} class={`group group-${side}`}>
      <dl class="facts" data-group={groupName(g)}>
        <dt>Executions</dt>
        <dd data-field="executions">{int(g.executions)}</dd>
        <dt>Total cost</dt>
        <dd title={`${g.cost.total_usd} USD`}>{usd(g.cost.total_usd)}</dd>
        <dt>Cost per execution</dt>
        <dd>mean {usd(pe.mean_usd)}</dd>
        <dt />
        <dd title={sampled}>
          p50 {approx}
          {usd(pe.p50_usd)} · p95 {approx}
          {usd(pe.p95_usd)}
        </dd>
        <dt>Latency</dt>
        <dd title={sampled}>
          p50 {approx}
          {duration(g.latency_ms.p50)} · p95 {approx}
          {duration(g.latency_ms.p95)}
        </dd>
        <dt>Tokens in / out</dt>
        <dd>
          {int(g.tokens.in)} / {int(g.tokens.out)}
        </dd>
      </dl>
      {names.length > 0 && (
        <table class="group-scores">
          <thead>
            <tr>
              <th>Score</th>
              <th class="num">Mean / rate</th>
              <th>95 % interval</th>
              <th class="num">n</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <ScoreRow name={n} s={g.scores[n]} />
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}

function ScoreRow({ name, s }: { name: string; s: GroupScore | undefined }) {
  if (!s)
    return (
      <tr data-score={name}>
        <td>{name}</td>
        <td class="num muted">no scores</td>
        <td />
        <td class="num">0</td>
      </tr>
    );
  const n = (
    <td class="num" title={`${s.n} scores on ${s.scored_executions} executions`}>
      {int(s.n)}
    </td>
  );
  if (s.data_type === 'CATEGORICAL')
    return (
      <tr data-score={name}>
        <td>{name}</td>
        <td colSpan={2} class="labels-count">
          {Object.entries(s.labels).map(([l, k]) => (
            <Badge kind="label">
              {l}: {int(k)}
            </Badge>
          ))}
        </td>
        {n}
      </tr>
    );
  const boolean = s.data_type === 'BOOLEAN';
  return (
    <tr data-score={name}>
      <td>{name}</td>
      <td class="num mean">{boolean ? rate(s.rate) : fig(s.mean)}</td>
      <td class="small">{interval(s.ci, boolean ? rate : fig)}</td>
      {n}
    </tr>
  );
}
