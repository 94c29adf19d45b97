// One group of the version comparison (prompt-compare.tsx): its executions, cost, latency, tokens,
// the dataset runs that tested its version, its score means or rates with their 95 % intervals, and
// a link to its executions (the executions page filtered by prompt and version, or label).
import { enc, query } from '../api.ts';
import { duration, figure, int, rate, usd } from '../format.ts';
import { Link } from '../router.tsx';
import type { CompareGroup, DatasetRunList, GroupScore, PromptComparison } from '../types.ts';
import { Badge, Card, useApi } from '../ui.tsx';
import { datasetPath } from './datasets.tsx';
import { groupName } from './prompt-compare.tsx';

/** Where a group's executions are listed: the executions page filtered by prompt and version (or label) over the window. */
export function groupExecutionsHref(projectId: string, c: Pick<PromptComparison, 'prompt_id' | 'window'>, g: CompareGroup): string {
  return `/projects/${enc(projectId)}/executions${query({
    prompt_id: c.prompt_id,
    prompt_version: g.version,
    prompt_label: g.version === undefined ? g.label : undefined,
    start: c.window.start,
    end: c.window.end,
  })}`;
}

export function Group({
  g,
  side,
  names,
  c,
  projectId,
}: {
  g: CompareGroup;
  side: 'a' | 'b';
  names: string[];
  c: PromptComparison;
  projectId: string;
}) {
  const pe = g.cost.per_execution;
  // Over 100,000 executions the percentiles come from daily samples (the API's `quantiles`).
  const estimated = c.quantiles === 'estimated';
  const approx = estimated ? '≈ ' : '';
  const sampled = estimated ? 'estimated from daily samples; counts, totals, means and tests are exact' : undefined;
  return (
    <Card
      title={`${side}: ${groupName(g)}`}
      class={`group group-${side}`}
      actions={
        <span class="group-links">
          <Link href={groupExecutionsHref(projectId, c, g)} class="executions-link">
            {int(g.executions)} executions →
          </Link>
        </span>
      }
    >
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
        <dd title={sampled} data-field="latency">
          p50 {approx}
          {duration(g.latency_ms.p50)} · p95 {approx}
          {duration(g.latency_ms.p95)}
        </dd>
        <dt>Tokens in / out</dt>
        <dd>
          {int(g.tokens.in)} / {int(g.tokens.out)}
        </dd>
        {g.version !== undefined && (
          <>
            <dt>Dataset runs</dt>
            <dd data-field="runs">
              <VersionRuns projectId={projectId} promptId={c.prompt_id} version={g.version} />
            </dd>
          </>
        )}
      </dl>
      {names.length > 0 && (
        <div class="scroll-x">
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
        </div>
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
  const f = boolean ? rate : figure;
  return (
    <tr data-score={name}>
      <td>{name}</td>
      <td class="num mean" title={String(boolean ? s.rate : s.mean)}>
        {boolean ? rate(s.rate) : figure(s.mean)}
      </td>
      <td class="small">{s.ci ? `${f(s.ci.low)} to ${f(s.ci.high)}` : 'no interval'}</td>
      {n}
    </tr>
  );
}

const RUNS_SHOWN = 5;

/** The dataset runs that tested a version (GET …/prompts/{id}/runs?version=N), newest first, each linked to its answer. */
function VersionRuns({ projectId, promptId, version }: { projectId: string; promptId: string; version: number }) {
  const runs = useApi<DatasetRunList>(
    `/api/projects/${enc(projectId)}/prompts/${enc(promptId)}/runs${query({ version, limit: RUNS_SHOWN })}`,
  );
  if (runs.error) return <span class="muted">could not be read: {runs.error.detail}</span>;
  if (!runs.data) return <span class="muted">…</span>;
  if (runs.data.items.length === 0) return <span class="muted">none yet</span>;
  return (
    <span class="version-runs">
      {runs.data.items.map((r) => (
        <Link href={`${datasetPath(projectId, r.dataset_id)}?tab=runs&run=${enc(r.run_id)}`} class="run-link">
          {r.name}
        </Link>
      ))}
      {runs.data.next_cursor && <span class="muted small">and older</span>}
    </span>
  );
}
