// One execution: cost and tokens (with the price row that priced it), the chat and tool timeline,
// the span tree as a waterfall, the prompt versions it used, its scores (scores.tsx), and "Add to
// dataset" (add-to-dataset.tsx).
import { enc } from '../api.ts';
import { duration, int, usd } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { Execution, Role } from '../types.ts';
import { Badge, Card, Empty, Load, Stat, Tabs, Time, useApi } from '../ui.tsx';
import { AddToDataset } from './add-to-dataset.tsx';
import { CostBreakdown } from './cost-breakdown.tsx';
import { ExecutionScores } from './scores.tsx';
import { Timeline } from './timeline.tsx';
import { Waterfall } from './waterfall.tsx';

type Tab = 'timeline' | 'spans' | 'templates';

export function ExecutionDetail({ projectId, traceId, role }: { projectId: string; traceId: string; role: Role }) {
  const loc = useLocation();
  const base = `/api/projects/${enc(projectId)}/executions/${enc(traceId)}`;
  const execution = useApi<Execution>(base);
  const tab = (loc.params.get('tab') as Tab | null) ?? 'timeline';
  return (
    <>
      <header class="page">
        <div>
          <Link href={`/projects/${enc(projectId)}/executions`} class="back">
            ← Executions
          </Link>
          <h1 class="mono">{traceId}</h1>
        </div>
      </header>
      <Load state={execution} label="Loading the execution…">
        {(e) => (
          <>
            <Summary e={e} />
            <ExecutionScores projectId={projectId} traceId={traceId} initial={e.scores ?? []} role={role} />
            {role !== 'viewer' && <AddToDataset projectId={projectId} traceId={traceId} />}
            <Tabs<Tab>
              tabs={[
                ['timeline', 'Timeline'],
                ['spans', `Spans (${e.span_count})`],
                ['templates', `Template usages (${e.template_usages?.length ?? 0})`],
              ]}
              active={tab}
              onChange={(t) => navigate(withParams(loc, { tab: t === 'timeline' ? null : t }), { replace: true })}
            />
            {tab === 'timeline' && <Timeline path={`${base}/timeline`} />}
            {tab === 'spans' && <Waterfall path={`${base}/hierarchy`} />}
            {tab === 'templates' && <TemplateUsages projectId={projectId} e={e} />}
          </>
        )}
      </Load>
    </>
  );
}

function Summary({ e }: { e: Execution }) {
  const cached = e.tokens_cached_in ?? 0;
  return (
    <div class="grid two">
      <Card title="Execution">
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <Badge kind={e.status === 'ok' ? 'ok' : 'bad'}>{e.status}</Badge>{' '}
            {e.error_message && <span class="error-text">{e.error_message}</span>}
          </dd>
          <dt>Agent</dt>
          <dd>{e.agent_id || '—'}</dd>
          <dt>Provider / model</dt>
          <dd>
            {e.provider || '—'} / {e.model || '—'}
          </dd>
          <dt>Started</dt>
          <dd>
            <Time iso={e.started_at} />
          </dd>
          <dt>Latency</dt>
          <dd>{duration(e.latency_ms)}</dd>
          <dt>Source</dt>
          <dd>{e.source === 'otlp' ? 'OpenTelemetry spans' : 'direct record (API)'}</dd>
          {e.session_id && (
            <>
              <dt>Session</dt>
              <dd>{e.session_id}</dd>
            </>
          )}
          {e.tags && e.tags.length > 0 && (
            <>
              <dt>Tags</dt>
              <dd>
                {e.tags.map((t) => (
                  <Badge>{t}</Badge>
                ))}
              </dd>
            </>
          )}
        </dl>
      </Card>
      <Card title="Cost and tokens" class="cost">
        <div class="stats">
          <Stat
            label="Cost"
            value={e.cost_source === 'unpriced' ? <Badge kind="warn">unpriced</Badge> : usd(e.cost_usd)}
            title={`${e.cost_usd} USD`}
          />
          <Stat label="Tokens in" value={int(e.tokens_in)} />
          <Stat label="Tokens out" value={int(e.tokens_out)} />
        </div>
        <dl class="facts">
          <dt>Cost source</dt>
          <dd>
            {e.cost_source === 'computed' && 'computed from the price table'}
            {e.cost_source === 'provided' && 'provided by the caller'}
            {e.cost_source === 'unpriced' && 'no price for this model: set a project price in Settings'}
          </dd>
          <dt>Price</dt>
          <dd class="mono" data-price-id>
            {e.price_id ?? '—'}
          </dd>
          {e.cost_computed_usd !== undefined && e.cost_computed_usd !== null && e.cost_source === 'provided' && (
            <>
              <dt>Computed cost</dt>
              <dd>{usd(e.cost_computed_usd)}</dd>
            </>
          )}
          <dt>Input tokens</dt>
          <dd>
            {int(e.tokens_in - cached)} uncached · {int(cached)} cache read · {int(e.tokens_cache_write_in ?? 0)} cache write
          </dd>
          <dt>Output tokens</dt>
          <dd>
            {int(e.tokens_out)} (of which {int(e.tokens_reasoning ?? 0)} reasoning)
          </dd>
          {e.usage_warnings && e.usage_warnings.length > 0 && (
            <>
              <dt>Warnings</dt>
              <dd>{e.usage_warnings.join('; ')}</dd>
            </>
          )}
        </dl>
      </Card>
      <CostBreakdown e={e} />
    </div>
  );
}

function TemplateUsages({ projectId, e }: { projectId: string; e: Execution }) {
  const usages = e.template_usages ?? [];
  if (usages.length === 0) {
    return (
      <Empty title="No prompt template recorded">
        <p>
          Record which prompt version an LLM call used: the <code>traceloom.prompt.id</code> / <code>traceloom.prompt.version</code> span
          attributes, or <code>template_usages</code> in a direct record (docs/traces.md, docs/executions.md).
        </p>
      </Empty>
    );
  }
  return (
    <Card>
      <table>
        <thead>
          <tr>
            <th>Prompt</th>
            <th>Version</th>
            <th>Asked for</th>
            <th>Role</th>
            <th>Message</th>
            <th>Inputs</th>
          </tr>
        </thead>
        <tbody>
          {usages.map((u) => (
            <tr>
              <td>
                <Link href={`/projects/${enc(projectId)}/prompts/${enc(u.prompt_id)}${u.version ? `?version=${u.version}` : ''}`}>
                  {u.prompt_id}
                </Link>
              </td>
              <td>{u.version ? `v${u.version}` : '—'}</td>
              <td>{u.version_ref ?? '—'}</td>
              <td>{u.role ?? '—'}</td>
              <td>{u.message_index ?? '—'}</td>
              <td>
                <code class="inline">{JSON.stringify(u.inputs ?? {})}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}
