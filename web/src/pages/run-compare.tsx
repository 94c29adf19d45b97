// Two runs of a dataset compared (GET …/runs/compare?runs=a,b; docs/datasets.md, "Comparing runs"):
// both runs' totals, b − a for cost per item, latency and each numeric or boolean score with the
// test named (paired where the same items ran in both), and the items side by side. Figures come
// from the API and are shown with the console's helpers (format.ts): money as money, durations,
// rates in percentage points, p with two significant digits.
import { query } from '../api.ts';
import { int, interval, pText, signedDuration, signedFigure, signedPoints, signedUsd } from '../format.ts';
import { useLocation } from '../router.tsx';
import type { DatasetRunComparison, RunTest } from '../types.ts';
import { Badge, Card, Load, useApi } from '../ui.tsx';
import { back, ItemCells, JsonCell, Totals } from './dataset-runs.tsx';

const LIMIT = 100;

const TESTS: Record<RunTest['test'], string> = {
  paired_t: 'paired t-test',
  welch_t: "Welch's t-test",
  mcnemar_exact: "McNemar's exact test",
  two_proportion_z: 'two-proportion z-test',
};

export function RunCompare({ projectId, base, runs }: { projectId: string; base: string; runs: string }) {
  const loc = useLocation();
  const c = useApi<DatasetRunComparison>(`${base}/runs/compare${query({ runs, limit: LIMIT })}`);
  return (
    <Load state={c} label="Comparing the runs…">
      {(r) => {
        const [a, b] = r.runs;
        return (
          <>
            {back(loc)}
            <h2>
              {b.name} against {a.name}
            </h2>
            <div class="grid two compare">
              <Totals t={a.totals} title={`a: ${a.name}`} />
              <Totals t={b.totals} title={`b: ${b.name}`} />
            </div>
            <Card title="Differences (b − a)" class="differences">
              <p data-field="paired_items">
                {int(r.comparison.paired_items)} items ran in both: {r.comparison.paired_items > 0 ? 'paired tests' : 'unpaired tests'}.
              </p>
              <TestRow label="Cost per item" t={r.comparison.cost_per_item} name="cost_per_item" unit="usd" />
              <TestRow label="Latency" t={r.comparison.latency_ms} name="latency_ms" unit="ms" />
              {Object.entries(r.comparison.scores).map(([name, t]) => (
                <TestRow label={name} t={t} name={`score:${name}`} unit={isRate(t) ? 'points' : 'score'} />
              ))}
              {Object.keys(r.comparison.scores).length === 0 && (
                <p class="muted">
                  No numeric or boolean scores on these runs' executions yet: add scores (or an evaluator) to compare quality.
                </p>
              )}
            </Card>
            <Card title="Item by item">
              <div class="scroll-x">
                <table class="compare-items">
                  <thead>
                    <tr>
                      <th rowSpan={2}>Input</th>
                      <th rowSpan={2}>Expected</th>
                      <th colSpan={5}>a: {a.name}</th>
                      <th colSpan={5}>b: {b.name}</th>
                    </tr>
                    <tr>
                      {[0, 1].map(() => (
                        <>
                          <th>Execution</th>
                          <th>Output</th>
                          <th class="num">Cost</th>
                          <th class="num">Latency</th>
                          <th>Scores</th>
                        </>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {r.items.map((row) => {
                      const any = (row.a ?? row.b)!;
                      return (
                        <tr data-item-id={row.item_id}>
                          <td>
                            <JsonCell value={any.input} />
                          </td>
                          <td>
                            <JsonCell value={any.expected_output} />
                          </td>
                          <ItemCells projectId={projectId} i={row.a} />
                          <ItemCells projectId={projectId} i={row.b} />
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </Card>
          </>
        );
      }}
    </Load>
  );
}

/** A score's test on booleans: its difference is of rates, shown in percentage points. */
const isRate = (t: RunTest) => t.test === 'mcnemar_exact' || t.test === 'two_proportion_z';

type Unit = 'usd' | 'ms' | 'points' | 'score';
const SIGNED: Record<Unit, (x: number | null) => string> = {
  usd: signedUsd,
  ms: signedDuration,
  points: signedPoints,
  score: signedFigure,
};
const OF: Record<Unit, string> = {
  usd: 'the difference in cost per item',
  ms: 'the difference in latency',
  points: 'the difference of rates',
  score: 'the difference of means',
};

function TestRow({ label, t, name, unit }: { label: string; t: RunTest; name: string; unit: Unit }) {
  const f = SIGNED[unit];
  return (
    <div class="difference" data-test={name}>
      <h4>{label}</h4>
      <p class="verdict" data-field="verdict">
        {t.verdict}
      </p>
      <dl class="facts">
        <dt>Difference (b − a)</dt>
        <dd data-field="difference" title={t.difference === null ? undefined : String(t.difference)}>
          {f(t.difference)}
        </dd>
        <dt>95 % interval</dt>
        <dd data-field="ci">
          {unit === 'points' ? interval(t.ci, (x) => signedPoints(x, false), OF[unit], 'points') : interval(t.ci, (x) => f(x), OF[unit])}
        </dd>
        <dt>Test</dt>
        <dd data-field="test" data-test-name={t.test}>
          {TESTS[t.test]}
          {t.n !== undefined && `, n = ${t.n}`}
        </dd>
        <dt>p-value</dt>
        <dd data-field="p_value" title={t.p_value === null ? undefined : String(t.p_value)}>
          <Significance t={t} />
        </dd>
      </dl>
    </div>
  );
}

/** p, and whether it is significant and why: the test decides at α = 0.05. */
export function Significance({ t }: { t: { p_value: number | null; significant: boolean } }) {
  if (t.p_value === null)
    return (
      <>
        — <Badge>not testable</Badge> <span class="muted small">too few values or no variation</span>
      </>
    );
  return t.significant ? (
    <>
      {pText(t.p_value)} <Badge kind="ok">significant</Badge> <span class="muted small">p &lt; 0.05</span>
    </>
  ) : (
    <>
      {pText(t.p_value)} <Badge kind="warn">not significant</Badge> <span class="muted small">p ≥ 0.05</span>
    </>
  );
}
