// One execution, the conversation first: its chat and tool timeline (timeline.tsx), or its span
// tree as a waterfall (waterfall.tsx), or the prompt versions it used; then who ran it and what it
// cost (user, session, agent, model, environment, metadata, the API key by name, why it failed,
// tokens, the exact cost and the price row behind it); then its scores (scores.tsx) and "Add to
// dataset" (add-to-dataset.tsx).
import type { ComponentChildren } from 'preact';
import { enc } from '../api.ts';
import { duration, int } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { Execution, Role } from '../types.ts';
import { Badge, Card, Empty, Load, Stat, Tabs, Time, useApi } from '../ui.tsx';
import { AddToDataset } from './add-to-dataset.tsx';
import { Value } from './rendered.tsx';
import { CostBreakdown } from './cost-breakdown.tsx';
import { ExecutionScores } from './scores.tsx';
import { Timeline } from './timeline.tsx';
import { Waterfall } from './waterfall.tsx';

type Tab = 'timeline' | 'spans' | 'templates';

/** Dollars to the nano-dollar the API keeps (costs are exact to 9 decimals), trailing zeros dropped. */
export const exactUsd = (n: number): string => `$${n.toFixed(9).replace(/\.?0+$/, '')}`;

export function ExecutionDetail({ projectId, traceId, role }: { projectId: string; traceId: string; role: Role }) {
  const loc = useLocation();
  const base = `/api/projects/${enc(projectId)}/executions/${enc(traceId)}`;
  const execution = useApi<Execution>(base);
  const tab = (loc.params.get('tab') as Tab | null) ?? 'timeline';
  return (
    <>
      <header class="page execution-head">
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
            <Glance e={e} />
            <div class="execution-main">
              <Tabs<Tab>
                tabs={[
                  ['timeline', 'Conversation'],
                  ['spans', `Spans (${e.span_count})`],
                  ['templates', `Template usages (${e.template_usages?.length ?? 0})`],
                ]}
                active={tab}
                onChange={(t) => navigate(withParams(loc, { tab: t === 'timeline' ? null : t }), { replace: true })}
              />
              {tab === 'timeline' && <Timeline path={`${base}/timeline`} />}
              {tab === 'spans' && <Waterfall path={`${base}/hierarchy`} />}
              {tab === 'templates' && <TemplateUsages projectId={projectId} e={e} />}
            </div>
            <Summary projectId={projectId} e={e} />
            <ExecutionScores projectId={projectId} traceId={traceId} initial={e.scores ?? []} role={role} />
            {role !== 'viewer' && <AddToDataset projectId={projectId} traceId={traceId} />}
          </>
        )}
      </Load>
    </>
  );
}

/** One line above the conversation: status (and why it failed), agent, model, when, how long, cost. */
function Glance({ e }: { e: Execution }) {
  return (
    <div class="execution-glance" data-status={e.status}>
      <div class="glance-line">
        <Badge kind={e.status === 'ok' ? 'ok' : 'bad'}>{e.status}</Badge>
        {e.agent_id && <strong>{e.agent_id}</strong>}
        <span>{e.model || e.provider || 'no model'}</span>
        <Time iso={e.started_at} />
        <span>{duration(e.latency_ms)}</span>
        <span title={`${e.cost_usd} USD`}>{e.cost_source === 'unpriced' ? 'unpriced' : exactUsd(e.cost_usd)}</span>
        <span class="muted">
          {int(e.tokens_in)} → {int(e.tokens_out)} tokens
        </span>
      </div>
      {e.status !== 'ok' && (
        <p class="error-reason" role="note" data-error-reason>
          {e.error_message ??
            (e.source === 'otlp'
              ? 'Failed; no span said why (no status message, exception event or error.type).'
              : 'Failed; the record came without an error_message.')}
        </p>
      )}
    </div>
  );
}

function Fact({ label, children, field }: { label: string; children: ComponentChildren; field?: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-field={field}>{children}</dd>
    </>
  );
}

function Summary({ projectId, e }: { projectId: string; e: Execution }) {
  const cached = e.tokens_cached_in ?? 0;
  const p = `/projects/${enc(projectId)}`;
  const metadata = Object.entries(e.metadata ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div class="grid two execution-facts">
      <Card title="Who and what">
        <dl class="facts">
          <Fact label="Status" field="status">
            <Badge kind={e.status === 'ok' ? 'ok' : 'bad'}>{e.status}</Badge>{' '}
            {e.error_message && <span class="error-text">{e.error_message}</span>}
          </Fact>
          <Fact label="User" field="user">
            {e.user_id ? <Link href={`${p}/executions?user_id=${enc(e.user_id)}`}>{e.user_id}</Link> : <span class="muted">—</span>}
          </Fact>
          <Fact label="Session" field="session">
            {e.session_id ? <Link href={`${p}/sessions/${enc(e.session_id)}`}>{e.session_id}</Link> : <span class="muted">—</span>}
          </Fact>
          <Fact label="Agent" field="agent">
            {e.agent_id || '—'}
          </Fact>
          <Fact label="Provider / model" field="model">
            {e.provider || '—'} / {e.model || '—'}
          </Fact>
          <Fact label="Environment" field="environment">
            {e.environment ?? <span class="muted">—</span>}
          </Fact>
          <Fact label="API key" field="api-key">
            {e.api_key_name ? (
              <span title={`key ${e.api_key_id}`}>{e.api_key_name}</span>
            ) : e.api_key_id ? (
              <span class="muted" title={`key ${e.api_key_id}`}>
                a deleted key
              </span>
            ) : (
              <span class="muted">— (not sent with an API key)</span>
            )}
          </Fact>
          <Fact label="Started">
            <Time iso={e.started_at} />
          </Fact>
          <Fact label="Latency">{duration(e.latency_ms)}</Fact>
          <Fact label="Source">{e.source === 'otlp' ? 'OpenTelemetry spans' : 'direct record (API)'}</Fact>
          {e.tags && e.tags.length > 0 && (
            <Fact label="Tags" field="tags">
              {e.tags.map((t) => (
                <Badge kind="tag">{t}</Badge>
              ))}
            </Fact>
          )}
        </dl>
        {metadata.length > 0 && (
          <>
            <h4>Metadata</h4>
            <dl class="facts metadata">
              {metadata.map(([k, v]) => (
                <>
                  <dt class="mono">{k}</dt>
                  <dd data-metadata={k}>
                    <Value value={v} label={k} />
                  </dd>
                </>
              ))}
            </dl>
          </>
        )}
      </Card>
      <Card title="Cost and tokens" class="cost">
        <div class="stats">
          <Stat
            label="Cost"
            value={e.cost_source === 'unpriced' ? <Badge kind="warn">unpriced</Badge> : <span data-exact-cost>{exactUsd(e.cost_usd)}</span>}
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
              <dd>{exactUsd(e.cost_computed_usd)}</dd>
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
                <Value value={u.inputs ?? {}} label="inputs" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}
