// Model connections (docs/evaluators.md, "Model connections"): the OpenAI-compatible endpoints
// judges, experiments and the playground call. The API key is write-only: the API stores it sealed
// and never returns it, so the list shows "key set" and an edit leaves the key empty — typed, it
// replaces the old one; left empty, the old one stays. Admins add, edit and delete them.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import type { ModelConnection } from '../types.ts';
import { Card, ErrorBox, Form, Load, Time, useAction, useApi } from '../ui.tsx';

interface Draft {
  name: string;
  base_url: string;
  model: string;
  provider: string;
  api_key: string;
}

const EMPTY: Draft = { name: '', base_url: 'https://api.openai.com/v1', model: '', provider: '', api_key: '' };

export function ModelConnections({ p }: { p: string }) {
  const list = useApi<{ items: ModelConnection[] }>(`${p}/model-connections`);
  const [editing, setEditing] = useState<ModelConnection | undefined>();
  const remove = useAction(async (c: ModelConnection) => {
    if (!confirm(`Delete the connection "${c.name}"? Evaluators and experiments using it stop finding it.`)) return;
    await api(`${p}/model-connections/${enc(c.connection_id)}`, { method: 'DELETE' });
    if (editing?.connection_id === c.connection_id) setEditing(undefined);
    list.reload();
  });
  return (
    <Card title="Model connections" class="model-connections">
      <p class="muted small">
        OpenAI-compatible chat completions endpoints (calls go to base URL + /chat/completions) for evaluators, experiments and the
        playground. The API key is stored sealed and never shown again.
      </p>
      <ConnectionForm
        key={editing?.connection_id ?? 'new'}
        p={p}
        connection={editing}
        onDone={() => {
          setEditing(undefined);
          list.reload();
        }}
      />
      <ErrorBox error={remove.error} title="Connection not deleted" />
      <Load state={list} label="Loading model connections…">
        {(data) =>
          data.items.length === 0 ? (
            <p class="muted">No model connection yet.</p>
          ) : (
            <div class="scroll">
              <table class="connections">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Model</th>
                    <th>Provider</th>
                    <th>Base URL</th>
                    <th>Key</th>
                    <th>Updated</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((c) => (
                    <tr data-connection={c.name} data-connection-id={c.connection_id}>
                      <td>
                        <strong>{c.name}</strong>
                      </td>
                      <td>{c.model}</td>
                      <td>{c.provider}</td>
                      <td class="mono small">{c.base_url}</td>
                      <td>{c.api_key_set ? 'set (sealed)' : '—'}</td>
                      <td>
                        <Time iso={c.updated_at} />
                      </td>
                      <td class="actions">
                        <button type="button" onClick={() => setEditing(c)}>
                          Edit
                        </button>
                        <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.run(c)}>
                          Delete
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Load>
    </Card>
  );
}

function ConnectionForm({ p, connection, onDone }: { p: string; connection?: ModelConnection; onDone(): void }) {
  const [f, setF] = useState<Draft>(
    connection
      ? { name: connection.name, base_url: connection.base_url, model: connection.model, provider: connection.provider, api_key: '' }
      : EMPTY,
  );
  const set = (k: keyof Draft) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const save = useAction(async () => {
    const body = {
      name: f.name.trim(),
      base_url: f.base_url.trim(),
      model: f.model.trim(),
      ...(f.provider.trim() ? { provider: f.provider.trim() } : {}),
      // Write-only: sent when typed; on an edit, empty keeps the sealed key.
      ...(f.api_key ? { api_key: f.api_key } : {}),
    };
    if (connection) await api<ModelConnection>(`${p}/model-connections/${enc(connection.connection_id)}`, { method: 'PUT', body });
    else await api<ModelConnection>(`${p}/model-connections`, { method: 'POST', body });
    setF(EMPTY);
    onDone();
  });
  return (
    <>
      <Form class="form-grid connection-form" onSubmit={() => save.run()} noValidate>
        <label>
          Name
          <input name="connection_name" placeholder="openai-mini" maxLength={200} value={f.name} onInput={set('name')} />
        </label>
        <label>
          Model
          <input name="connection_model" placeholder="gpt-4o-mini" maxLength={256} value={f.model} onInput={set('model')} />
        </label>
        <label>
          Provider (prices; default openai)
          <input name="connection_provider" placeholder="openai" maxLength={64} value={f.provider} onInput={set('provider')} />
        </label>
        <label class="wide">
          Base URL
          <input name="connection_base_url" type="url" maxLength={2048} value={f.base_url} onInput={set('base_url')} />
        </label>
        <label class="wide">
          API key {connection ? '(empty: keep the current one)' : ''}
          <input
            name="connection_api_key"
            type="password"
            autoComplete="new-password"
            maxLength={4096}
            placeholder={connection ? 'set — type a new key to replace it' : 'sk-…'}
            value={f.api_key}
            onInput={set('api_key')}
          />
        </label>
        <div>
          <button type="submit" class="primary" disabled={save.busy}>
            {connection ? 'Save connection' : 'Add connection'}
          </button>{' '}
          {connection && (
            <button type="button" onClick={onDone}>
              Cancel
            </button>
          )}
        </div>
      </Form>
      <ErrorBox error={save.error} title="Connection not saved" />
    </>
  );
}
