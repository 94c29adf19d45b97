// API keys of the project: list, create (the secret is shown once), revoke.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import type { ApiKey, MeContext } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Load, SecretOnce, Time, useAction, useApi } from '../ui.tsx';

export function ApiKeys({ p, me }: { p: string; me: MeContext }) {
  const keys = useApi<{ items: ApiKey[] }>(`${p}/api-keys`);
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [scope, setScope] = useState<'full' | 'ingest'>('full');
  const [created, setCreated] = useState<{ name: string; key: string } | undefined>();
  const create = useAction(async () => {
    setCreated(undefined);
    const k = await api<{ name: string; key: string }>(`${p}/api-keys`, {
      method: 'POST',
      body: { name: name.trim(), expires_in_days: Number(days), scope },
    });
    setCreated({ name: k.name, key: k.key });
    setName('');
    keys.reload();
  });
  const revoke = useAction(async (keyId: string) => {
    await api(`${p}/api-keys/${enc(keyId)}`, { method: 'DELETE' });
    keys.reload();
  });
  return (
    <Card title="API keys">
      {me.auth_method === 'api_key' && (
        <p class="muted small">
          Creating and revoking keys needs a signed-in identity-provider token (JWT), or the admin CLI (npm run admin -- create-key).
        </p>
      )}
      <Form class="inline" onSubmit={() => create.run()}>
        <input
          name="key_name"
          placeholder="name, e.g. billing-agent"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <label>
          expires in{' '}
          <input
            name="expires_in_days"
            type="number"
            min="1"
            max="3650"
            value={days}
            onInput={(e) => setDays((e.target as HTMLInputElement).value)}
          />{' '}
          days
        </label>
        <select
          name="scope"
          aria-label="Scope"
          value={scope}
          onChange={(e) => setScope((e.target as HTMLSelectElement).value as 'full' | 'ingest')}
        >
          <option value="full">full (reads and writes)</option>
          <option value="ingest">ingest only (for agents)</option>
        </select>
        <button type="submit" class="primary" disabled={create.busy}>
          Create key
        </button>
      </Form>
      <ErrorBox error={create.error ?? revoke.error} title="Not done" />
      {created && <SecretOnce label={`API key "${created.name}"`} value={created.key} />}
      <Load state={keys}>
        {(k) =>
          k.items.length === 0 ? (
            <p class="muted">No key yet.</p>
          ) : (
            <table class="keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Key</th>
                  <th>Scope</th>
                  <th>Status</th>
                  <th>Created</th>
                  <th>Expires</th>
                  <th>Last used</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {k.items.map((key) => (
                  <tr data-key-id={key.key_id}>
                    <td>{key.name}</td>
                    <td class="mono">{key.prefix}…</td>
                    <td>{key.scope}</td>
                    <td>
                      <Badge kind={key.status === 'active' ? 'ok' : 'bad'}>{key.status}</Badge>
                    </td>
                    <td>
                      <Time iso={key.created_at} />
                    </td>
                    <td>
                      <Time iso={key.expires_at} />
                    </td>
                    <td>{key.last_used_at ? <Time iso={key.last_used_at} /> : 'never'}</td>
                    <td>
                      {key.status === 'active' && (
                        <button
                          type="button"
                          class="danger"
                          disabled={revoke.busy}
                          onClick={() => confirm(`Revoke "${key.name}"? It stops working at once.`) && revoke.run(key.key_id)}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Load>
    </Card>
  );
}
