// "Is version b better than a, and what does it cost?": GET .../prompts/<id>/compare for two
// versions (or two labels) over 7/30/90 UTC days. Per group: cost, latency, tokens, score means
// (rates, label counts) with their 95 % intervals, and links to its executions; then b against a:
// each score's tested difference and the API's verdict, and the cost per execution with its own
// verdict (cost spoken of as cost). Figures come from the API and are shown with the console's
// helpers (format.ts). The query string holds by, a, b and days.
//
// Opening without a choice (decision): a is the version the `production` label holds (else the
// first label's), b the newest version with executions in the window — a newer version nobody ran
// yet is skipped (GET …/analytics counts executions per version). With fewer than two versions
// with executions the page says so and waits for a pick rather than compare empty groups.
import type { ComponentChildren } from 'preact';
import { query } from '../api.ts';
import { figure, int, interval, signedFigure, signedPoints, signedUsd } from '../format.ts';
import { navigate, useLocation, withParams } from '../router.tsx';
import type { CompareGroup, PromptAnalytics, PromptComparison, PromptWithLatest, TestOutcome } from '../types.ts';
import { Card, Empty, Load, useApi } from '../ui.tsx';
import { Group } from './prompt-compare-group.tsx';
import { DAYS } from './prompt-tools.tsx';
import { Significance } from './run-compare.tsx';

const TESTS: Record<TestOutcome['test'], string> = { welch_t: "Welch's t-test", two_proportion_z: 'two-proportion z-test' };

export const groupName = (g: CompareGroup): string => (g.version !== undefined ? `v${g.version}` : (g.label ?? '?'));

/** The label whose version a comparison starts from: production, else the first by name. */
export const anchorLabel = (labels: Record<string, number>): string | undefined =>
  'production' in labels ? 'production' : Object.keys(labels).sort()[0];

/**
 * The versions a comparison opens on: a = the anchor label's version (when it has executions),
 * b = the newest version with executions other than a. Null when fewer than two have executions.
 */
export function defaultVersions(labels: Record<string, number>, counts: Map<number, number>): { a: number; b: number } | null {
  const withData = [...counts.entries()]
    .filter(([, n]) => n > 0)
    .map(([v]) => v)
    .sort((x, y) => y - x);
  if (withData.length < 2) return null;
  const anchor = anchorLabel(labels);
  const labelled = anchor !== undefined ? labels[anchor] : undefined;
  if (labelled !== undefined && withData.includes(labelled)) return { a: labelled, b: withData.find((v) => v !== labelled)! };
  return { a: withData[1]!, b: withData[0]! };
}

export function Compare({ base, projectId, p }: { base: string; projectId: string; p: PromptWithLatest }) {
  const loc = useLocation();
  const latest = p.latest_version;
  const anchor = anchorLabel(p.labels);
  const labels = Object.keys(p.labels).sort((x, y) => (x === anchor ? -1 : y === anchor ? 1 : x.localeCompare(y)));
  const by = loc.params.get('by') === 'label' ? 'label' : 'version';
  const days = Number(loc.params.get('days')) || 30;
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  // Executions per version over the same UTC days: which versions have data to compare.
  const analytics = useApi<PromptAnalytics>(by === 'version' ? `${base}/analytics${query({ start })}` : null);
  const counts = new Map((analytics.data?.by_version ?? []).map((v) => [v.version, v.total_executions]));
  const pick = (key: 'a' | 'b'): string | undefined => {
    const v = loc.params.get(key);
    if (by === 'label') return v && labels.includes(v) ? v : undefined;
    return v && Number(v) >= 1 && Number(v) <= latest ? String(Number(v)) : undefined;
  };
  const chosen = { a: pick('a'), b: pick('b') };
  const defaults = by === 'version' && analytics.data ? defaultVersions(p.labels, counts) : null;
  const fallback =
    by === 'label'
      ? { a: labels[0], b: labels[1] }
      : defaults
        ? { a: String(defaults.a), b: String(defaults.b) }
        : { a: String(p.labels[anchor ?? ''] ?? Math.max(1, latest - 1)), b: String(latest) };
  const a = chosen.a ?? fallback.a;
  const b = chosen.b ?? fallback.b;
  // Without a choice, versions wait for the counts; with fewer than two versions with data, for a pick.
  const waiting = by === 'version' && !(chosen.a && chosen.b) && !analytics.data && !analytics.error;
  const tooFew = by === 'version' && latest > 1 && !(chosen.a && chosen.b) && !!analytics.data && defaults === null;
  const ready = a !== undefined && b !== undefined && a !== b && !waiting && !tooFew;
  const cmp = useApi<PromptComparison>(
    ready ? `${base}/compare${query({ [by === 'label' ? 'labels' : 'versions']: `${a},${b}`, start })}` : null,
  );
  const set = (changes: Record<string, string | null>) => navigate(withParams(loc, changes), { replace: true });
  const choices = by === 'label' ? labels : Array.from({ length: latest }, (_, i) => String(latest - i));
  const show = (c: string) => {
    if (by === 'label') return `${c} (v${p.labels[c]})`;
    const n = counts.get(Number(c));
    const held = Object.entries(p.labels)
      .filter(([, v]) => v === Number(c))
      .map(([l]) => l);
    return `v${c}${held.length ? ` · ${held.join(', ')}` : ''}${analytics.data ? ` (${int(n ?? 0)} executions)` : ''}`;
  };
  const chooser = (key: 'a' | 'b', value: string | undefined) => (
    <select
      name={`compare-${key}`}
      aria-label={key === 'a' ? 'Group A' : 'Group B'}
      value={value}
      onChange={(e) => set({ a: a ?? null, b: b ?? null, [key]: (e.target as HTMLSelectElement).value })}
    >
      {choices.map((c) => (
        <option value={c}>{show(c)}</option>
      ))}
    </select>
  );
  const withData = [...counts.entries()].filter(([, n]) => n > 0).map(([v]) => v);
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
          {by === 'version' && !(chosen.a && chosen.b) && defaults && (
            <>
              {' '}
              Opened on {anchor && p.labels[anchor] === defaults.a ? `the ${anchor} version` : `v${defaults.a}`} against the newest version
              with executions.
            </>
          )}
        </p>
      </Card>
      {by === 'label' && labels.length < 2 ? (
        <Empty title="Fewer than two labels">
          <p>An A/B split by labels needs two labels (e.g. production and staging) that agents fetch the prompt by.</p>
        </Empty>
      ) : waiting ? (
        <Load state={analytics} label="Finding the versions with executions…">
          {() => null}
        </Load>
      ) : tooFew ? (
        <Empty title={withData.length === 0 ? 'No executions to compare' : 'Only one version has executions'}>
          <p class="too-few">
            {withData.length === 0
              ? `No version of this prompt has executions in the last ${days} days.`
              : `Only v${withData[0]} has executions in the last ${days} days: a comparison needs two versions with data.`}{' '}
            Pick two versions above to compare them anyway, or choose a longer window.
          </p>
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
          {(c) => <Result c={c} projectId={projectId} />}
        </Load>
      )}
    </>
  );
}

function Result({ c, projectId }: { c: PromptComparison; projectId: string }) {
  const [ga, gb] = c.groups;
  const names = [...new Set([...Object.keys(ga.scores), ...Object.keys(gb.scores)])].sort();
  const cost = c.comparison.cost_per_execution;
  const diff = `${groupName(gb)} − ${groupName(ga)}`;
  return (
    <>
      <div class="grid two compare">
        {[ga, gb].map((g, i) => (
          <Group g={g} side={i === 0 ? 'a' : 'b'} names={names} c={c} projectId={projectId} />
        ))}
      </div>
      <Card title={`${groupName(gb)} against ${groupName(ga)}`} class="differences">
        {names.length === 0 && (
          <p class="muted">
            No scores on these executions yet: add some on an execution's page, or with POST …/scores. Cost and latency compare anyway.
          </p>
        )}
        {Object.entries(c.comparison.scores).map(([name, t]) => {
          const points = t.test === 'two_proportion_z';
          const f = points ? signedPoints : signedFigure;
          return (
            <div class="difference" data-score={name}>
              <p class="verdict">
                <strong>{name}:</strong> {t.verdict}
              </p>
              <TestFacts
                label={`Difference (${diff})`}
                t={t}
                ci={
                  points
                    ? interval(t.ci, (x) => signedPoints(x, false), 'the difference of rates', 'points')
                    : interval(t.ci, (x) => f(x), 'the difference of means')
                }
              >
                <span data-field="difference">{f(t.difference)}</span>
              </TestFacts>
            </div>
          );
        })}
        <div class="difference" data-score="cost">
          <h4>Cost per execution</h4>
          <p class="verdict" data-field="verdict">
            {cost.verdict}
          </p>
          <TestFacts label={`Difference (${diff})`} t={cost} ci={interval(cost.ci, signedUsd, 'the difference in cost per execution')}>
            <span data-field="difference" title={cost.difference === null ? undefined : `${cost.difference} USD`}>
              {signedUsd(cost.difference)}
            </span>{' '}
            {cost.relative !== null && (
              <strong class="relative" data-field="relative">
                ({cost.relative > 0 ? '+' : cost.relative < 0 ? '−' : ''}
                {figure(Math.abs(cost.relative) * 100)} %)
              </strong>
            )}
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
function TestFacts({ label, t, ci, children }: { label: string; t: TestOutcome; ci: string; children: ComponentChildren }) {
  return (
    <dl class="facts">
      <dt>{label}</dt>
      <dd>{children}</dd>
      <dt>Interval</dt>
      <dd data-field="ci">{ci}</dd>
      <dt>Test</dt>
      <dd data-field="test" data-test-name={t.test}>
        {TESTS[t.test]}
      </dd>
      <dt>p-value</dt>
      <dd data-field="p_value" title={t.p_value === null ? undefined : String(t.p_value)}>
        <Significance t={t} />
      </dd>
    </dl>
  );
}
