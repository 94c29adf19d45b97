// API keys of the project: list (with each key's role), create (the secret is shown once), revoke.
// Creating and revoking need a JWT or the operator: the API answers 403 to any API key, even an
// admin's (route `jwtOnly`, src/http/auth.ts), so an API-key session is not offered those buttons.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import type { ApiKey, MeContext, Role } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Load, SecretOnce, Time, useAction, useApi } from '../ui.tsx';

export function ApiKeys({ p, me }: { p: string; me: MeContext }) {
  const keys = useApi<{ items: ApiKey[] }>(`${p}/api-keys`);
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [scope, setScope] = useState<'full' | 'ingest'>('full');
  const [role, setRole] = useState<Role>('member');
  const canManage = mayManageKeys(me);
  const [created, setCreated] = useState<{ name: string; key: string } | undefined>();
  const create = useAction(async () => {
    setCreated(undefined);
    const k = await api<{ name: string; key: string }>(`${p}/api-keys`, {
      method: 'POST',
      body: { name: name.trim(), expires_in_days: Number(days), scope, role },
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
      {!canManage && (
        <p class="muted small" data-keys-readonly>
          You are signed in with an API key: creating and revoking keys needs a signed-in identity-provider token (JWT), or the admin CLI
          (npm run admin -- create-key).
        </p>
      )}
      {canManage && (
        <Form class="inline" onSubmit={() => create.run()}>
          <label>
            Name{' '}
            <input
              name="key_name"
              placeholder="e.g. billing-agent"
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </label>
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
          <label>
            Scope{' '}
            <select name="scope" value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as 'full' | 'ingest')}>
              <option value="full">full (reads and writes)</option>
              <option value="ingest">ingest only (for agents)</option>
            </select>
          </label>
          <label>
            Role{' '}
            <select name="role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
              <option value="viewer">viewer (reads)</option>
              <option value="member">member (also writes)</option>
              <option value="admin">admin (also budget, prices, retention)</option>
            </select>
          </label>
          <button type="submit" class="primary" disabled={create.busy}>
            Create key
          </button>
        </Form>
      )}
      <ErrorBox error={create.error ?? revoke.error} title="Not done" />
      {created && <SecretOnce label={`API key "${created.name}"`} value={created.key} />}
      <Load state={keys}>
        {(k) =>
          k.items.length === 0 ? (
            <p class="muted">No key yet.</p>
          ) : (
            <div class="scroll">
              <table class="keys">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Key</th>
                    <th>Role</th>
                    <th>Scope</th>
                    <th>Status</th>
                    <th>Created</th>
                    <th>Expires</th>
                    <th>Last used</th>
                    {canManage && <th />}
                  </tr>
                </thead>
                <tbody>
                  {k.items.map((key) => (
                    <tr data-key-id={key.key_id}>
                      <td>{key.name}</td>
                      <td class="mono">{key.prefix}…</td>
                      <td data-field="role">{key.role}</td>
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
                      {canManage && (
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
                      )}
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

/**
 * Whether the signed-in principal may create and revoke keys: the rule of the API's key routes
 * (`need: 'admin'`, `jwtOnly`): an admin that is not an API key (a JWT, or dev mode without
 * authentication). Settings is shown to admins only, so the role is already checked there.
 */
export function mayManageKeys(me: MeContext): boolean {
  return me.auth_method !== 'api_key';
}
