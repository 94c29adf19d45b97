// One prompt: its versions, the content of one (Run on a dataset: an experiment), its labels and their
// release gates (prompt-labels.tsx), rollback (confirmed first: prompt-rollback.tsx); and the render, diff and analytics tabs
// (prompt-tools.tsx) and the comparison (prompt-compare.tsx).
import { enc, query } from '../api.ts';
import { useState } from 'preact/hooks';
import { text } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { PromptVersion, PromptWithLatest, Role, VersionSummary } from '../types.ts';
import { Badge, Card, Load, Tabs, Time, useApi } from '../ui.tsx';
import { PromptEditor } from './prompt-editor.tsx';
import { Author, useKeyNames } from '../authors.tsx';
import { Compare } from './prompt-compare.tsx';
import { Analytics, Diff, RenderPreview } from './prompt-tools.tsx';
import { Labels } from './prompt-labels.tsx';
import { RollbackDialog, RollbackMessage, type RollbackOutcome } from './prompt-rollback.tsx';

type Tab = 'versions' | 'edit' | 'render' | 'diff' | 'analytics' | 'compare';

export function PromptDetail({ projectId, promptId, role, userId }: { projectId: string; promptId: string; role: Role; userId: string }) {
  const loc = useLocation();
  const base = `/api/projects/${enc(projectId)}/prompts/${enc(promptId)}`;
  const prompt = useApi<PromptWithLatest>(base);
  const versions = useApi<{ items: VersionSummary[] }>(`${base}/versions`);
  const tab = (loc.params.get('tab') as Tab | null) ?? 'versions';
  const reload = () => {
    prompt.reload();
    versions.reload();
  };
  return (
    <>
      <header class="page">
        <div>
          <Link href={`/projects/${enc(projectId)}/prompts`} class="back">
            ← Prompts
          </Link>
          <h1>{promptId}</h1>
          {prompt.data?.description && <p class="muted">{prompt.data.description}</p>}
        </div>
        <Link href={`/projects/${enc(projectId)}/playground?prompt=${enc(promptId)}`} class="button">
          Try in the playground
        </Link>
      </header>
      <Load state={prompt} label="Loading the prompt…">
        {(p) => (
          <>
            <div class="prompt-tabs">
              <Tabs<Tab>
                tabs={[
                  ['versions', `Versions (${p.latest_version})`],
                  ...(role !== 'viewer' ? ([['edit', 'New version']] as Array<[Tab, string]>) : []),
                  ['render', 'Render preview'],
                  ['diff', 'Diff'],
                  ['analytics', 'Analytics'],
                  ['compare', 'Compare'],
                ]}
                active={tab}
                onChange={(t) => navigate(withParams(loc, { tab: t === 'versions' ? null : t }), { replace: true })}
              />
            </div>
            {tab === 'versions' && (
              <div class="grid versions-layout">
                <Load state={versions}>{(v) => <VersionList items={v.items} latest={p.latest_version} projectId={projectId} />}</Load>
                <div>
                  <VersionView base={base} projectId={projectId} p={p} canWrite={role !== 'viewer'} onChanged={reload} />
                  <Labels base={base} projectId={projectId} p={p} role={role} userId={userId} onChanged={reload} />
                </div>
              </div>
            )}
            {tab === 'edit' && <NewVersion base={base} projectId={projectId} p={p} onSaved={reload} />}
            {tab === 'render' && <RenderPreview base={base} p={p} />}
            {tab === 'diff' && <Diff base={base} p={p} />}
            {tab === 'analytics' && <Analytics base={base} p={p} />}
            {tab === 'compare' && <Compare base={base} projectId={projectId} p={p} />}
          </>
        )}
      </Load>
    </>
  );
}

/** The editor, starting from the latest version; saved: back to the versions, the new one shown. */
function NewVersion({ base, projectId, p, onSaved }: { base: string; projectId: string; p: PromptWithLatest; onSaved(): void }) {
  const loc = useLocation();
  const latest = useApi<PromptVersion>(`${base}/versions/${p.latest_version}`);
  return (
    <Load state={latest}>
      {(v) => (
        <PromptEditor
          projectId={projectId}
          promptId={p.prompt_id}
          from={v}
          onSaved={() => {
            navigate(withParams(loc, { tab: null, version: null }), { replace: true });
            onSaved();
          }}
        />
      )}
    </Load>
  );
}

/** The version the page shows: ?version=N, else the latest. */
export function selectedVersion(params: URLSearchParams, latest: number): number {
  const v = Number(params.get('version'));
  return Number.isInteger(v) && v >= 1 && v <= latest ? v : latest;
}

function VersionList({ items, latest, projectId }: { items: VersionSummary[]; latest: number; projectId: string }) {
  const names = useKeyNames(projectId);
  const loc = useLocation();
  const current = selectedVersion(loc.params, latest);
  return (
    <Card title="History" class="version-list">
      <ol>
        {items.map((v) => (
          <li class={v.version === current ? 'active' : ''} data-version={v.version}>
            <button
              type="button"
              class="link"
              onClick={() => navigate(withParams(loc, { version: v.version === latest ? null : String(v.version) }), { replace: true })}
            >
              <strong>v{v.version}</strong>{' '}
              {v.labels.map((l) => (
                <Badge kind="label">{l}</Badge>
              ))}
            </button>
            <div class="muted small">
              <Time iso={v.created_at} />
              {v.created_by && (
                <>
                  {' · '}
                  <Author id={v.created_by} names={names} />
                </>
              )}
            </div>
            {v.commit_message && <div class="small">{v.commit_message}</div>}
            {v.rolled_back_from && <div class="muted small">rollback to v{v.rolled_back_from}</div>}
          </li>
        ))}
      </ol>
    </Card>
  );
}

function VersionView({
  base,
  projectId,
  p,
  canWrite,
  onChanged,
}: {
  base: string;
  projectId: string;
  p: PromptWithLatest;
  canWrite: boolean;
  onChanged(): void;
}) {
  const loc = useLocation();
  const v = selectedVersion(loc.params, p.latest_version);
  const version = useApi<PromptVersion>(`${base}/versions/${v}`);
  const names = useKeyNames(projectId);
  const [confirming, setConfirming] = useState(false);
  const [outcome, setOutcome] = useState<RollbackOutcome | undefined>();
  return (
    <Card
      title={`Version ${v}${v === p.latest_version ? ' (latest)' : ''}`}
      actions={
        canWrite && (
          <>
            <Link
              href={`/projects/${enc(projectId)}/experiments${query({ new: 1, prompt: p.prompt_id, version: v })}`}
              class="button run-on-dataset"
            >
              Run on a dataset
            </Link>
            {v !== p.latest_version && (
              <button
                type="button"
                class="rollback"
                onClick={() => setConfirming(true)}
                title={`Appends v${p.latest_version + 1} with this content; no label moves unless you ask`}
              >
                Roll back to v{v}
              </button>
            )}
          </>
        )
      }
    >
      {confirming && (
        <RollbackDialog
          base={base}
          p={p}
          version={v}
          onCancel={() => setConfirming(false)}
          onDone={(o) => {
            setConfirming(false);
            setOutcome(o);
            navigate(withParams(loc, { version: null }), { replace: true });
            onChanged();
          }}
        />
      )}
      {outcome && <RollbackMessage o={outcome} onClose={() => setOutcome(undefined)} />}
      <Load state={version}>
        {(pv) => (
          <>
            <dl class="facts">
              <dt>Labels</dt>
              <dd>{pv.labels.length ? pv.labels.map((l) => <Badge kind="label">{l}</Badge>) : '—'}</dd>
              <dt>Variables</dt>
              <dd>{pv.variables.length ? pv.variables.map((x) => <code class="inline">{`{{${x}}}`}</code>) : '—'}</dd>
              <dt>Created</dt>
              <dd>
                <Time iso={pv.created_at} />
                {pv.created_by && (
                  <>
                    {' by '}
                    <Author id={pv.created_by} names={names} />
                  </>
                )}
              </dd>
              {pv.commit_message && (
                <>
                  <dt>Message</dt>
                  <dd>{pv.commit_message}</dd>
                </>
              )}
            </dl>
            <Template v={pv} />
            {Object.keys(pv.config).length > 0 && (
              <>
                <h4>Config</h4>
                <pre>{text(pv.config)}</pre>
              </>
            )}
          </>
        )}
      </Load>
    </Card>
  );
}

export function Template({ v }: { v: Pick<PromptVersion, 'template'> }) {
  if (typeof v.template === 'string') return <pre class="template">{v.template}</pre>;
  return (
    <div class="chat-template">
      {v.template.map((m) =>
        m.type === 'placeholder' ? (
          <div class="event message placeholder">
            <Badge kind="placeholder">placeholder</Badge>
            <pre class="content">{`{{${String(m.name)}}} (messages given at render time)`}</pre>
          </div>
        ) : (
          <div class={`event message role-${m.role}`}>
            <Badge kind={`role-${m.role}`}>{m.role}</Badge>
            <pre class="content">{m.content}</pre>
          </div>
        ),
      )}
    </div>
  );
}
