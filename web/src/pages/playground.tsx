// The playground (docs/playground.md): pick a prompt version or start blank, edit the template,
// fill its variables, tick 1-3 model connections and run: each model's answer streams into its
// own column, then its tokens, latency, exact cost and the execution recorded for it. An edited
// version runs as an unsaved template and can be saved as a new version of its prompt. The URL
// holds the prompt and version picked (`?prompt=<id>&version=<n>`).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, authHeaders, api, enc } from '../api.ts';
import { extractVariables, isPlaceholder, type Template } from '../../../src/prompts/template-render.ts';
import { duration, int, usdText } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { PlaygroundRunResult, Prompt, PromptVersion, Role } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Form, Load, useAction, useApi } from '../ui.tsx';

const MAX_MODELS = 3;

interface Connection {
  connection_id: string;
  name: string;
  model: string;
}
type Result = PlaygroundRunResult['results'][number];
interface Column {
  text: string;
  result?: Result;
}

type StreamEvent =
  | { event: 'delta'; data: { connection_id: string; content: string } }
  | { event: 'result'; data: Result }
  | { event: 'error'; data: { detail: string } }
  | { event: 'start' | 'done'; data: unknown };

/** Reads a text/event-stream body: each event's name and parsed data, as they arrive. */
async function readEvents(res: Response, on: (e: StreamEvent) => void): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    pending += value;
    for (let i = pending.indexOf('\n\n'); i >= 0; i = pending.indexOf('\n\n')) {
      const block = pending.slice(0, i);
      pending = pending.slice(i + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) on({ event, data: JSON.parse(data) } as StreamEvent);
    }
  }
}

export function Playground({ projectId, role }: { projectId: string; role: Role }) {
  const loc = useLocation();
  const base = `/api/projects/${enc(projectId)}`;
  const promptId = loc.params.get('prompt') ?? '';
  const versionParam = loc.params.get('version') ?? '';
  const prompts = useApi<{ items: Prompt[] }>(`${base}/prompts?limit=200`);
  const connections = useApi<{ items: Connection[] }>(`${base}/model-connections`);
  const version = useApi<PromptVersion>(promptId ? `${base}/prompts/${enc(promptId)}/versions/${enc(versionParam || 'latest')}` : null);

  // The template being tried: the version's until edited.
  const [template, setTemplate] = useState<Template>('');
  const [edited, setEdited] = useState(false);
  useEffect(() => {
    setTemplate(version.data ? version.data.template : '');
    setEdited(false);
  }, [version.data, promptId]);
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [picked, setPicked] = useState<string[]>([]);
  const [columns, setColumns] = useState<Record<string, Column>>({});
  const [saved, setSaved] = useState<PromptVersion | undefined>();
  const variables = extractVariables(template);
  const edit = (t: Template) => {
    setTemplate(t);
    setEdited(true);
    setSaved(undefined);
  };

  const run = useAction(async () => {
    setColumns(Object.fromEntries(picked.map((id) => [id, { text: '' }])));
    const body = {
      ...(promptId && !edited ? { prompt: { prompt_id: promptId, version: version.data?.version ?? 'latest' } } : { template }),
      ...(promptId && edited && version.data ? { config: version.data.config } : {}),
      variables: Object.fromEntries(variables.map((v) => [v, inputs[v] ?? ''])),
      connection_ids: picked,
      stream: true,
    };
    const res = await fetch(`${base}/playground/runs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeaders() },
      body: JSON.stringify(body),
    });
    if (!res.ok) {
      const detail = ((await res.json().catch(() => ({}))) as { detail?: string }).detail ?? `${res.status} ${res.statusText}`;
      throw new ApiError(res.status, detail);
    }
    await readEvents(res, (e) => {
      if (e.event === 'delta') {
        const { connection_id: id, content } = e.data;
        setColumns((c) => ({ ...c, [id]: { ...c[id]!, text: c[id]!.text + content } }));
      } else if (e.event === 'result') setColumns((c) => ({ ...c, [e.data.connection_id]: { text: e.data.output ?? '', result: e.data } }));
      else if (e.event === 'error') throw new ApiError(500, e.data.detail);
    });
  });

  const save = useAction(async () => {
    const v = await api<PromptVersion>(`${base}/prompts/${enc(promptId)}/versions`, {
      method: 'POST',
      body: { template, commit_message: 'from the playground' },
    });
    setSaved(v);
    setEdited(false);
    navigate(withParams(loc, { version: String(v.version) }), { replace: true });
  });

  const toggle = (id: string) =>
    setPicked(picked.includes(id) ? picked.filter((p) => p !== id) : picked.length < MAX_MODELS ? [...picked, id] : picked);

  return (
    <>
      <header class="page">
        <h1>Playground</h1>
      </header>
      <Card title="Prompt" class="playground-prompt">
        <div class="row">
          <label>
            Prompt{' '}
            <select
              name="prompt"
              value={promptId}
              onChange={(e) => navigate(withParams(loc, { prompt: (e.target as HTMLSelectElement).value, version: null }))}
            >
              <option value="">(blank template)</option>
              {(prompts.data?.items ?? []).map((p) => (
                <option value={p.prompt_id}>{p.prompt_id}</option>
              ))}
            </select>
          </label>
          {promptId && version.data && (
            <label>
              Version{' '}
              <input
                name="version"
                type="number"
                min={1}
                value={version.data.version}
                onChange={(e) => navigate(withParams(loc, { version: (e.target as HTMLInputElement).value }))}
              />
            </label>
          )}
          {edited && <Badge kind="warn">edited: runs unsaved</Badge>}
        </div>
        <ErrorBox error={version.error} />
        {typeof template === 'string' ? (
          <textarea
            name="template"
            aria-label="Template"
            rows={6}
            value={template}
            onInput={(e) => edit((e.target as HTMLTextAreaElement).value)}
          />
        ) : (
          template.map((m, i) =>
            isPlaceholder(m) ? (
              <p class="muted small">[placeholder: {m.name}] (left empty)</p>
            ) : (
              <label class="message">
                {m.role}
                <textarea
                  name={`message-${i}`}
                  rows={3}
                  value={m.content}
                  onInput={(e) =>
                    edit(
                      template.map((x, j) =>
                        j === i && !isPlaceholder(x) ? { ...x, content: (e.target as HTMLTextAreaElement).value } : x,
                      ),
                    )
                  }
                />
              </label>
            ),
          )
        )}
        {promptId && edited && role !== 'viewer' && (
          <button type="button" class="save-version" onClick={() => save.run()} disabled={save.busy}>
            Save as new version
          </button>
        )}
        {saved && (
          <p class="saved">
            Saved as <Link href={`/projects/${enc(projectId)}/prompts/${enc(saved.prompt_id)}`}>version {saved.version}</Link>
          </p>
        )}
        <ErrorBox error={save.error} />
      </Card>
      <Form onSubmit={() => run.run()} noValidate>
        <Card title="Variables">
          {variables.length === 0 ? (
            <p class="muted">The template has no variables.</p>
          ) : (
            variables.map((v) => (
              <label>
                {v}{' '}
                <input
                  name={`var-${v}`}
                  value={inputs[v] ?? ''}
                  onInput={(e) => setInputs({ ...inputs, [v]: (e.target as HTMLInputElement).value })}
                />
              </label>
            ))
          )}
        </Card>
        <Card title={`Models (up to ${MAX_MODELS})`}>
          <Load state={connections} label="Loading model connections…">
            {(list) =>
              list.items.length === 0 ? (
                <Empty title="No model connections">
                  <p>
                    An admin adds one (an OpenAI-compatible endpoint and its key) in{' '}
                    <Link href={`/projects/${enc(projectId)}/settings#model-connections`}>Settings → Model connections</Link>.
                  </p>
                </Empty>
              ) : (
                <div class="playground-connections">
                  {list.items.map((c) => (
                    <label class="connection">
                      <input
                        type="checkbox"
                        name="connection"
                        value={c.connection_id}
                        checked={picked.includes(c.connection_id)}
                        onChange={() => toggle(c.connection_id)}
                      />{' '}
                      {c.name} <span class="muted small">{c.model}</span>
                    </label>
                  ))}
                </div>
              )
            }
          </Load>
          <button type="submit" disabled={run.busy || picked.length === 0 || role === 'viewer'}>
            {run.busy ? 'Running…' : 'Run'}
          </button>
        </Card>
      </Form>
      <ErrorBox error={run.error} />
      <div class="playground-results">
        {picked
          .filter((id) => columns[id])
          .map((id) => {
            const col = columns[id]!;
            const r = col.result;
            const name = connections.data?.items.find((c) => c.connection_id === id)?.name ?? id;
            return (
              <Card title={name} class="playground-column">
                <div data-connection={name}>
                  <pre class="output">{col.text}</pre>
                  {r && (
                    <div class="result">
                      {r.status === 'error' ? <p class="error">{r.error}</p> : null}
                      <span data-field="cost_usd">{usdText(r.cost_usd)}</span> ·{' '}
                      <span data-field="tokens">
                        {int(r.tokens_in)} in / {int(r.tokens_out)} out
                      </span>{' '}
                      · {duration(r.latency_ms)} · <Link href={`/projects/${enc(projectId)}/executions/${enc(r.trace_id)}`}>execution</Link>
                    </div>
                  )}
                </div>
              </Card>
            );
          })}
      </div>
    </>
  );
}
