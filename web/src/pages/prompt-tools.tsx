// Prompt tabs beyond the history: render preview (the API's 422 shown inline), side-by-side diff
// of two versions, and per-version analytics (cost, latency percentiles, tokens).
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { DailyCostChart } from '../charts.tsx';
import { duration, int, usd } from '../format.ts';
import { navigate, useLocation, withParams } from '../router.tsx';
import type { PromptAnalytics, PromptDiff, PromptVersion, PromptWithLatest } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Form, Load, Stat, TableScroll, useAction, useApi } from '../ui.tsx';
import { selectedVersion } from './prompt.tsx';

const VERSION_LABELS: Record<string, string> = {
  'render-version': 'Version to render',
  'diff-a': 'Version to compare from',
  'diff-b': 'Version to compare to',
};

function VersionSelect({ name, value, latest, onChange }: { name: string; value: number; latest: number; onChange(v: number): void }) {
  return (
    <select
      name={name}
      aria-label={VERSION_LABELS[name] ?? 'Version'}
      value={value}
      onChange={(e) => onChange(Number((e.target as HTMLSelectElement).value))}
    >
      {Array.from({ length: latest }, (_, i) => latest - i).map((n) => (
        <option value={n}>v{n}</option>
      ))}
    </select>
  );
}

interface Rendered {
  version: number;
  type: 'text' | 'chat';
  text?: string;
  messages?: Array<{ role: string; content: string }>;
  unused_inputs: string[];
}

export function RenderPreview({ base, p }: { base: string; p: PromptWithLatest }) {
  const loc = useLocation();
  const v = selectedVersion(loc.params, p.latest_version);
  const version = useApi<PromptVersion>(`${base}/versions/${v}`);
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [slots, setSlots] = useState<Record<string, string>>({});
  const [result, setResult] = useState<Rendered | undefined>();
  const render = useAction(async () => {
    setResult(undefined);
    // Empty fields are left out, so the API names each missing variable and placeholder (422).
    const given = Object.fromEntries(Object.entries(inputs).filter(([, x]) => x !== ''));
    const placeholders = Object.fromEntries(
      Object.entries(slots)
        .filter(([, x]) => x.trim() !== '')
        .map(([name, x]) => {
          try {
            return [name, JSON.parse(x) as unknown];
          } catch {
            throw new Error(`placeholders.${name}: not JSON (a list of {"role", "content"} messages)`);
          }
        }),
    );
    setResult(await api<Rendered>(`${base}/render`, { method: 'POST', body: { version: v, inputs: given, placeholders } }));
  });
  return (
    <div class="grid two">
      <Card
        title="Inputs"
        actions={
          <VersionSelect
            name="render-version"
            value={v}
            latest={p.latest_version}
            onChange={(n) => navigate(withParams(loc, { version: String(n) }), { replace: true })}
          />
        }
      >
        <Load state={version}>
          {(pv) => (
            <Form class="stack" onSubmit={() => render.run()}>
              {pv.variables.length === 0 && <p class="muted">This version has no variables.</p>}
              {pv.variables.map((name) => (
                <label>
                  <code class="inline">{`{{${name}}}`}</code>
                  <textarea
                    name={`input-${name}`}
                    rows={2}
                    value={inputs[name] ?? ''}
                    onInput={(e) => setInputs({ ...inputs, [name]: (e.target as HTMLTextAreaElement).value })}
                  />
                </label>
              ))}
              {(pv.placeholders ?? []).map((name) => (
                <label>
                  <code class="inline">{`placeholder ${name}`}</code>
                  <textarea
                    name={`placeholder-${name}`}
                    rows={3}
                    placeholder='[{"role": "user", "content": "..."}]'
                    value={slots[name] ?? ''}
                    onInput={(e) => setSlots({ ...slots, [name]: (e.target as HTMLTextAreaElement).value })}
                  />
                </label>
              ))}
              <button type="submit" class="primary" disabled={render.busy}>
                Render v{v}
              </button>
            </Form>
          )}
        </Load>
      </Card>
      <Card title="Preview">
        <ErrorBox error={render.error} title="Not rendered" />
        {!result && !render.error && <p class="muted">Fill the variables and render: the output is what an agent gets.</p>}
        {result && (
          <div class="rendered">
            {result.text !== undefined && <pre class="template">{result.text}</pre>}
            {result.messages?.map((m) => (
              <div class={`event message role-${m.role}`}>
                <Badge kind={`role-${m.role}`}>{m.role}</Badge>
                <pre class="content">{m.content}</pre>
              </div>
            ))}
            {result.unused_inputs.length > 0 && <p class="muted">Inputs no variable used: {result.unused_inputs.join(', ')}</p>}
          </div>
        )}
      </Card>
    </div>
  );
}

type Cell = { op: 'equal' | 'add' | 'remove' | 'none'; line: string };

/** Lines of a unified diff as two aligned columns: removed lines left, added lines right. */
export function sideBySide(lines: PromptDiff['content']['lines']): Array<[Cell, Cell]> {
  const rows: Array<[Cell, Cell]> = [];
  let removed: string[] = [];
  let added: string[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      rows.push([
        i < removed.length ? { op: 'remove', line: removed[i]! } : { op: 'none', line: '' },
        i < added.length ? { op: 'add', line: added[i]! } : { op: 'none', line: '' },
      ]);
    }
    removed = [];
    added = [];
  };
  for (const l of lines) {
    if (l.op === 'remove') removed.push(l.line);
    else if (l.op === 'add') added.push(l.line);
    else {
      flush();
      rows.push([
        { op: 'equal', line: l.line },
        { op: 'equal', line: l.line },
      ]);
    }
  }
  flush();
  return rows;
}

function DiffTable({ title, part, from, to }: { title: string; part: PromptDiff['content']; from: number; to: number }) {
  return (
    <>
      <h4>
        {title} {part.changed ? <Badge kind="warn">changed</Badge> : <Badge>unchanged</Badge>}
      </h4>
      <table class="diff">
        <thead>
          <tr>
            <th>v{from}</th>
            <th>v{to}</th>
          </tr>
        </thead>
        <tbody>
          {sideBySide(part.lines).map(([a, b]) => (
            <tr>
              <td class={`d-${a.op}`}>
                <pre>{a.line}</pre>
              </td>
              <td class={`d-${b.op}`}>
                <pre>{b.line}</pre>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function Diff({ base, p }: { base: string; p: PromptWithLatest }) {
  const loc = useLocation();
  const latest = p.latest_version;
  const a = Number(loc.params.get('a')) || Math.max(1, latest - 1);
  const b = Number(loc.params.get('b')) || latest;
  const diff = useApi<PromptDiff>(latest > 1 ? `${base}/versions/${a}/diff/${b}` : null);
  if (latest === 1) return <Empty title="Only one version">A diff needs two versions; add one with POST …/versions.</Empty>;
  return (
    <Card
      title="Compare versions"
      actions={
        <span class="inline">
          <VersionSelect
            name="diff-a"
            value={a}
            latest={latest}
            onChange={(n) => navigate(withParams(loc, { a: String(n) }), { replace: true })}
          />
          <span>→</span>
          <VersionSelect
            name="diff-b"
            value={b}
            latest={latest}
            onChange={(n) => navigate(withParams(loc, { b: String(n) }), { replace: true })}
          />
        </span>
      }
    >
      <Load state={diff}>
        {(d) => (
          <>
            {!d.changed && (
              <p class="muted">
                v{d.from} and v{d.to} have the same content and config.
              </p>
            )}
            <DiffTable title="Template" part={d.content} from={d.from} to={d.to} />
            {d.config.changed && <DiffTable title="Config" part={d.config} from={d.from} to={d.to} />}
          </>
        )}
      </Load>
    </Card>
  );
}

export const DAYS: Array<[string, number]> = [
  ['7 days', 7],
  ['30 days', 30],
  ['90 days', 90],
];

export function Analytics({ base, p }: { base: string; p: PromptWithLatest }) {
  const loc = useLocation();
  const days = Number(loc.params.get('days')) || 30;
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const analytics = useApi<PromptAnalytics>(`${base}/analytics${query({ start })}`);
  return (
    <>
      <div class="inline">
        {DAYS.map(([label, n]) => (
          <button
            type="button"
            class={n === days ? 'active' : ''}
            onClick={() => navigate(withParams(loc, { days: n === 30 ? null : String(n) }), { replace: true })}
          >
            {label}
          </button>
        ))}
      </div>
      <Load state={analytics} label="Loading analytics…">
        {(a) =>
          a.total_executions === 0 ? (
            <Empty title={`No execution used ${p.prompt_id} in the last ${days} days`}>
              <p>
                Executions count here when they record a template usage of this prompt (span attribute traceloom.prompt.id, or
                template_usages in a direct record).
              </p>
            </Empty>
          ) : (
            <>
              <Card>
                <div class="stats">
                  <Stat label="Executions" value={int(a.total_executions)} />
                  <Stat label="Cost" value={usd(a.total_cost)} title={`${a.total_cost} USD`} />
                  <Stat label="Avg cost" value={usd(a.avg_cost)} />
                  <Stat label="Latency p50 / p95" value={`${duration(a.latency_ms.p50)} / ${duration(a.latency_ms.p95)}`} />
                  <Stat label="Tokens in / out" value={`${int(a.tokens_in)} / ${int(a.tokens_out)}`} />
                </div>
                <DailyCostChart days={a.daily} height={180} />
              </Card>
              <Card title="By version">
                <TableScroll label="By version">
                  <table class="by-version">
                    <thead>
                      <tr>
                        <th>Version</th>
                        <th class="num">Executions</th>
                        <th class="num">Cost</th>
                        <th class="num">Avg cost</th>
                        <th class="num">p50</th>
                        <th class="num">p95</th>
                        <th class="num">Tokens in / out</th>
                      </tr>
                    </thead>
                    <tbody>
                      {a.by_version.map((v) => (
                        <tr data-version={v.version}>
                          <td>v{v.version}</td>
                          <td class="num">{int(v.total_executions)}</td>
                          <td class="num">{usd(v.total_cost)}</td>
                          <td class="num">{usd(v.avg_cost)}</td>
                          <td class="num">{duration(v.latency_ms.p50)}</td>
                          <td class="num">{duration(v.latency_ms.p95)}</td>
                          <td class="num">
                            {int(v.tokens_in)} / {int(v.tokens_out)}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              </Card>
            </>
          )
        }
      </Load>
      {analytics.data && (
        <p class="muted small">
          UTC days {analytics.data.start.slice(0, 10)} to {new Date(Date.parse(analytics.data.end) - 86_400_000).toISOString().slice(0, 10)}
          , both included.
        </p>
      )}
    </>
  );
}
