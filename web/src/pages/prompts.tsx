// Prompts: the project's prompts (GET .../prompts), searchable by id, paged by offset.
import { useState } from 'preact/hooks';
import { enc, query } from '../api.ts';
import { int } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { Page, Prompt } from '../types.ts';
import { Badge, Card, Empty, Form, Load, Time, useApi } from '../ui.tsx';
import { openPrompt, PromptEditor } from './prompt-editor.tsx';

const LIMIT = 50;

export function Prompts({ projectId }: { projectId: string }) {
  const loc = useLocation();
  const q = loc.params.get('q') ?? '';
  const offset = Number(loc.params.get('offset') ?? 0) || 0;
  const archived = loc.params.get('include_archived') === 'true';
  const list = useApi<Page<Prompt>>(
    `/api/projects/${enc(projectId)}/prompts${query({ q, offset, limit: LIMIT, include_archived: archived || undefined })}`,
  );
  const [search, setSearch] = useState(q);
  const creating = loc.params.get('new') === '1';
  return (
    <>
      <header class="page">
        <h1>Prompts</h1>
        <button type="button" class="primary" onClick={() => navigate(withParams(loc, { new: creating ? null : '1' }))}>
          {creating ? 'Close the editor' : 'New prompt'}
        </button>
        <Form class="inline" onSubmit={() => navigate(withParams(loc, { q: search, offset: null }))}>
          <input
            type="search"
            name="q"
            placeholder="Search by id"
            value={search}
            onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
          />
          <label class="toggle">
            <input
              type="checkbox"
              checked={archived}
              onChange={(e) =>
                navigate(withParams(loc, { include_archived: (e.target as HTMLInputElement).checked ? 'true' : null, offset: null }))
              }
            />
            archived too
          </label>
        </Form>
      </header>
      {creating && <PromptEditor projectId={projectId} onSaved={(v) => openPrompt(projectId, v)} />}
      <Load state={list} label="Loading prompts…">
        {(page) =>
          page.items.length === 0 ? (
            q ? (
              <Empty title={`No prompt id contains "${q}"`} />
            ) : (
              <Empty title="No prompts yet">
                <p>
                  Create one with <strong>New prompt</strong> above, or through the API; agents then fetch it by id and label, and
                  executions record which version they used:
                </p>
                <pre>{`curl -X POST ${location.origin}/api/projects/${projectId}/prompts \\
  -H 'X-API-Key: tl_...' -H 'Content-Type: application/json' \\
  -d '{"prompt_id":"support-reply","type":"text","template":"Answer {{question}} politely.","labels":["production"]}'`}</pre>
              </Empty>
            )
          ) : (
            <Card>
              <table class="prompts">
                <thead>
                  <tr>
                    <th>Prompt</th>
                    <th>Type</th>
                    <th class="num">Latest</th>
                    <th>Labels</th>
                    <th>Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((p) => (
                    <tr data-prompt-id={p.prompt_id}>
                      <td>
                        <Link href={`/projects/${enc(projectId)}/prompts/${enc(p.prompt_id)}`}>{p.prompt_id}</Link>
                        {p.archived_at && <Badge kind="warn">archived</Badge>}
                        {p.description && <div class="muted small">{p.description}</div>}
                      </td>
                      <td>{p.type}</td>
                      <td class="num">v{p.latest_version}</td>
                      <td>
                        {Object.entries(p.labels).map(([label, v]) => (
                          <Badge kind="label">
                            {label} → v{v}
                          </Badge>
                        ))}
                      </td>
                      <td>
                        <Time iso={p.updated_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <div class="table-head">
                <span class="muted">
                  {int(offset + 1)}–{int(offset + page.items.length)} of {int(page.total)}
                </span>
                <span class="pager">
                  <button
                    type="button"
                    disabled={offset === 0}
                    onClick={() => navigate(withParams(loc, { offset: String(Math.max(0, offset - LIMIT)) }))}
                  >
                    ← Previous
                  </button>
                  <button
                    type="button"
                    disabled={offset + page.items.length >= page.total}
                    onClick={() => navigate(withParams(loc, { offset: String(offset + LIMIT) }))}
                  >
                    Next →
                  </button>
                </span>
              </div>
            </Card>
          )
        }
      </Load>
    </>
  );
}
