// Model connections (docs/evaluators.md): per project, an OpenAI-compatible chat completions
// endpoint — base URL, model, the provider its prices are looked up under, and an API key sealed
// at rest (secrets.ts). The key is write-only: no answer, log line or error carries it; a
// connection says only that it has one. The base URL takes the webhooks' URL check here and their
// address guard at every call (judge-client.ts). This file holds the SQL of `model_connections`.
import crypto from 'node:crypto';
import { conflict, notFound } from '../errors.ts';
import type { Queryable } from '../stores/postgres.ts';
import { checkWebhookUrl } from '../spend/webhooks.ts';
import type { SecretBox } from './secrets.ts';

export interface ConnectionInput {
  name: string;
  base_url: string;
  model: string;
  api_key: string;
  provider?: string;
}
export type ConnectionUpdate = Partial<ConnectionInput>;

export interface ModelConnection {
  connection_id: string;
  name: string;
  base_url: string;
  model: string;
  provider: string;
  /** Always true: the key itself is never returned. */
  api_key_set: true;
  created_at: string;
  updated_at: string;
}

/** What a judge call needs, key opened: held in memory only for the call. */
export interface OpenConnection {
  baseUrl: string;
  model: string;
  provider: string;
  apiKey: string;
}

type Row = {
  connection_id: string;
  name: string;
  base_url: string;
  model: string;
  provider: string;
  api_key_sealed: string;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = 'connection_id, name, base_url, model, provider, api_key_sealed, created_at, updated_at';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const present = (r: Row): ModelConnection => ({
  connection_id: r.connection_id,
  name: r.name,
  base_url: r.base_url,
  model: r.model,
  provider: r.provider,
  api_key_set: true,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const nameTaken = (name: string) => conflict(`name: a model connection named "${name}" exists in this project`);
function uniqueName(name: string | undefined) {
  return (err: { code?: string }) => {
    if (err.code === '23505') throw nameTaken(name ?? '');
    throw err;
  };
}

export function createConnections(db: Queryable, box: SecretBox) {
  async function row(projectId: string, connectionId: string): Promise<Row> {
    if (!UUID.test(connectionId)) throw notFound('Model connection');
    const [r] = await db.query<Row>(`SELECT ${COLUMNS} FROM model_connections WHERE project_id = $1 AND connection_id = $2`, [
      projectId,
      connectionId,
    ]);
    if (!r) throw notFound('Model connection');
    return r;
  }

  return {
    async create(projectId: string, input: ConnectionInput): Promise<ModelConnection> {
      const baseUrl = checkWebhookUrl(input.base_url, 'base_url');
      const sealed = box.seal(input.api_key);
      const rows = await db
        .query<Row>(
          `INSERT INTO model_connections (connection_id, project_id, name, base_url, model, provider, api_key_sealed)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
          [crypto.randomUUID(), projectId, input.name, baseUrl, input.model, input.provider ?? 'openai', sealed],
        )
        .catch(uniqueName(input.name));
      return present(rows[0]!);
    },

    async list(projectId: string): Promise<ModelConnection[]> {
      const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM model_connections WHERE project_id = $1 ORDER BY name`, [projectId]);
      return rows.map(present);
    },

    async get(projectId: string, connectionId: string): Promise<ModelConnection> {
      return present(await row(projectId, connectionId));
    },

    async update(projectId: string, connectionId: string, input: ConnectionUpdate): Promise<ModelConnection> {
      const current = await row(projectId, connectionId);
      const baseUrl = input.base_url === undefined ? current.base_url : checkWebhookUrl(input.base_url, 'base_url');
      const sealed = input.api_key === undefined ? current.api_key_sealed : box.seal(input.api_key);
      const rows = await db
        .query<Row>(
          `UPDATE model_connections SET name = $3, base_url = $4, model = $5, provider = $6, api_key_sealed = $7, updated_at = now()
           WHERE project_id = $1 AND connection_id = $2 RETURNING ${COLUMNS}`,
          [
            projectId,
            connectionId,
            input.name ?? current.name,
            baseUrl,
            input.model ?? current.model,
            input.provider ?? current.provider,
            sealed,
          ],
        )
        .catch(uniqueName(input.name));
      if (!rows[0]) throw notFound('Model connection');
      return present(rows[0]);
    },

    /** 409 while an evaluator uses it (the foreign key says so). */
    async remove(projectId: string, connectionId: string): Promise<void> {
      await row(projectId, connectionId);
      await db
        .query('DELETE FROM model_connections WHERE project_id = $1 AND connection_id = $2', [projectId, connectionId])
        .catch((err: { code?: string }) => {
          if (err.code === '23503') throw conflict('connection: evaluators use this model connection; delete or change them first');
          throw err;
        });
    },

    /** The connection with its key opened, for one judge call (an Error naming why it cannot be). */
    async open(projectId: string, connectionId: string): Promise<OpenConnection> {
      const r = await row(projectId, connectionId);
      return { baseUrl: r.base_url, model: r.model, provider: r.provider, apiKey: box.open(r.api_key_sealed) };
    },
  };
}

export type Connections = ReturnType<typeof createConnections>;
