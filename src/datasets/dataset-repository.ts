// The `datasets`, `dataset_items` and `dataset_item_versions` tables (schema/postgres/014): every
// statement that reads or writes them. Every query is scoped by project_id. An item's content is
// in its versions; the item row holds the current version number, the archive mark and the order
// (seq) listings and exports page by.
import { conflict, notFound } from '../errors.ts';
import type { PostgresStore, Queryable } from '../stores/postgres.ts';
import { canonicalJson } from '../prompts/template.ts';

export type DatasetRow = {
  dataset_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  items: string | number;
};

export type ItemRow = {
  item_id: string;
  dataset_id: string;
  seq: string;
  version: number;
  input: unknown;
  expected_output: unknown;
  metadata: Record<string, unknown>;
  source_trace_id: string | null;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

/** What one item version holds, as written. */
export interface ItemContent {
  input: unknown;
  expected_output?: unknown;
  metadata?: Record<string, unknown>;
}

export interface NewItem extends ItemContent {
  item_id: string;
  source_trace_id?: string;
}

const DATASET_COLUMNS = `d.dataset_id, d.name, d.description, d.metadata, d.created_at, d.updated_at,
  (SELECT count(*) FROM dataset_items i WHERE i.project_id = d.project_id AND i.dataset_id = d.dataset_id AND i.archived_at IS NULL) AS items`;

const ITEM_COLUMNS = `i.item_id, i.dataset_id, i.seq::text AS seq, i.version, v.input, v.expected_output, v.metadata, i.source_trace_id,
  i.archived_at, i.created_at, i.updated_at`;

const ITEM_FROM = 'dataset_items i JOIN dataset_item_versions v ON v.item_id = i.item_id AND v.version = i.version';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

function uniqueName<T>(name: string) {
  return (err: { code?: string }): T => {
    if (err.code === '23505') throw conflict(`name: a dataset named "${name}" exists in this project`);
    throw err;
  };
}

/**
 * Inserts items at version 1 in `tx`, one statement per table for the whole batch, seq in the
 * order given. With `skipExisting` an item id already stored is left as it is (an import's retry
 * keys its items by import id and line); returns how many were stored.
 */
export async function insertItems(
  tx: Queryable,
  projectId: string,
  datasetId: string,
  items: readonly NewItem[],
  skipExisting = false,
): Promise<number> {
  if (items.length === 0) return 0;
  const doc = JSON.stringify(
    items.map((it) => ({
      item_id: it.item_id,
      source_trace_id: it.source_trace_id ?? null,
      input: it.input,
      ...(it.expected_output !== undefined ? { expected_output: it.expected_output } : {}),
      metadata: it.metadata ?? {},
    })),
  );
  // With skipExisting, an item that exists keeps its versions too: its version 1 exists (an item
  // never lacks it), so that row is skipped by the same conflict.
  const skip = skipExisting ? 'ON CONFLICT DO NOTHING' : '';
  const [stored] = await tx.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO dataset_items (item_id, project_id, dataset_id, source_trace_id)
       SELECT (e.v->>'item_id')::uuid, $1, $2, e.v->>'source_trace_id'
       FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(v, ord) ORDER BY e.ord
       ${skip} RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    [projectId, datasetId, doc],
  );
  await tx.query(
    `INSERT INTO dataset_item_versions (item_id, version, project_id, input, expected_output, metadata)
     SELECT (e.v->>'item_id')::uuid, 1, $1, e.v->'input', e.v->'expected_output', e.v->'metadata'
     FROM jsonb_array_elements($2::jsonb) AS e(v) ${skip}`,
    [projectId, doc],
  );
  return stored!.n;
}

export function createDatasetRepository(db: PostgresStore) {
  return {
    async createDataset(
      projectId: string,
      id: string,
      input: { name: string; description?: string; metadata?: Record<string, unknown> },
    ): Promise<DatasetRow> {
      await db
        .query(`INSERT INTO datasets (dataset_id, project_id, name, description, metadata) VALUES ($1, $2, $3, $4, $5)`, [
          id,
          projectId,
          input.name,
          input.description ?? null,
          json(input.metadata ?? {}),
        ])
        .catch(uniqueName(input.name));
      return this.getDataset(projectId, id);
    },

    async getDataset(projectId: string, datasetId: string): Promise<DatasetRow> {
      if (!isUuid(datasetId)) throw notFound('Dataset');
      const [row] = await db.query<DatasetRow>(`SELECT ${DATASET_COLUMNS} FROM datasets d WHERE d.project_id = $1 AND d.dataset_id = $2`, [
        projectId,
        datasetId,
      ]);
      if (!row) throw notFound('Dataset');
      return row;
    },

    /** Datasets by name, after `afterName` (keyset). */
    async listDatasets(projectId: string, limit: number, afterName: string | undefined): Promise<DatasetRow[]> {
      return db.query<DatasetRow>(
        `SELECT ${DATASET_COLUMNS} FROM datasets d WHERE d.project_id = $1 AND ($2::text IS NULL OR d.name > $2) ORDER BY d.name LIMIT $3`,
        [projectId, afterName ?? null, limit],
      );
    },

    async updateDataset(
      projectId: string,
      datasetId: string,
      input: { name?: string; description?: string | null; metadata?: Record<string, unknown> },
    ): Promise<DatasetRow> {
      const current = await this.getDataset(projectId, datasetId);
      await db
        .query(
          `UPDATE datasets SET name = COALESCE($3, name), description = CASE WHEN $4 THEN $5 ELSE description END,
             metadata = COALESCE($6::jsonb, metadata), updated_at = now()
           WHERE project_id = $1 AND dataset_id = $2`,
          [projectId, datasetId, input.name ?? null, input.description !== undefined, input.description ?? null, json(input.metadata)],
        )
        .catch(uniqueName(input.name ?? current.name));
      return this.getDataset(projectId, datasetId);
    },

    async deleteDataset(projectId: string, datasetId: string): Promise<void> {
      if (!isUuid(datasetId)) throw notFound('Dataset');
      const rows = await db.query('DELETE FROM datasets WHERE project_id = $1 AND dataset_id = $2 RETURNING dataset_id', [
        projectId,
        datasetId,
      ]);
      if (rows.length === 0) throw notFound('Dataset');
    },

    /** Adds items (version 1 each) in one transaction: all or none; returns them as stored. */
    async addItems(projectId: string, datasetId: string, items: readonly NewItem[]): Promise<ItemRow[]> {
      return db.transaction(async (tx) => {
        await insertItems(tx, projectId, datasetId, items);
        return tx.query<ItemRow>(
          `SELECT ${ITEM_COLUMNS} FROM ${ITEM_FROM} WHERE i.project_id = $1 AND i.item_id = ANY($2::uuid[]) ORDER BY i.seq`,
          [projectId, items.map((i) => i.item_id)],
        );
      });
    },

    async getItem(projectId: string, datasetId: string, itemId: string): Promise<ItemRow> {
      if (!isUuid(itemId) || !isUuid(datasetId)) throw notFound('Dataset item');
      const [row] = await db.query<ItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM ${ITEM_FROM} WHERE i.project_id = $1 AND i.dataset_id = $2 AND i.item_id = $3`,
        [projectId, datasetId, itemId],
      );
      if (!row) throw notFound('Dataset item');
      return row;
    },

    /** Items in the order they were added, after seq `afterSeq` (keyset). */
    async listItems(projectId: string, datasetId: string, q: { limit: number; afterSeq?: string; archived: boolean }): Promise<ItemRow[]> {
      return db.query<ItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM ${ITEM_FROM}
         WHERE i.project_id = $1 AND i.dataset_id = $2 AND ($3 OR i.archived_at IS NULL) AND i.seq > $4::bigint
         ORDER BY i.seq LIMIT $5`,
        [projectId, datasetId, q.archived, q.afterSeq ?? '0', q.limit],
      );
    },

    /**
     * A new version of the item's content (`content` given), and/or its archive mark changed, under
     * the item's row lock: versions are gap-free. Content equal to the current version's writes none.
     */
    async updateItem(
      projectId: string,
      datasetId: string,
      itemId: string,
      change: { content?: ItemContent; archived?: boolean },
    ): Promise<ItemRow> {
      if (!isUuid(itemId) || !isUuid(datasetId)) throw notFound('Dataset item');
      return db.transaction(async (tx) => {
        // Lock the item row alone, then read its current version: a locking read that joins the
        // versions re-checks the join against the row a concurrent edit committed (version n+1)
        // with the version row of its own snapshot (n), matches nothing and would answer 404.
        const [locked] = await tx.query<{ version: number }>(
          'SELECT version FROM dataset_items WHERE project_id = $1 AND dataset_id = $2 AND item_id = $3 FOR UPDATE',
          [projectId, datasetId, itemId],
        );
        if (!locked) throw notFound('Dataset item');
        const [cur] = await tx.query<{ version: number; input: unknown; expected_output: unknown; metadata: unknown }>(
          'SELECT version, input, expected_output, metadata FROM dataset_item_versions WHERE project_id = $1 AND item_id = $2 AND version = $3',
          [projectId, itemId, locked.version],
        );
        if (!cur) throw notFound('Dataset item');
        let version = cur.version;
        const c = change.content;
        if (c) {
          const next = { input: c.input, expected_output: c.expected_output ?? null, metadata: c.metadata ?? {} };
          const same =
            canonicalJson([cur.input, cur.expected_output ?? null, cur.metadata]) ===
            canonicalJson([next.input, next.expected_output, next.metadata]);
          if (!same) {
            version += 1;
            await tx.query(
              `INSERT INTO dataset_item_versions (item_id, version, project_id, input, expected_output, metadata) VALUES ($1, $2, $3, $4, $5, $6)`,
              [
                itemId,
                version,
                projectId,
                json(next.input),
                c.expected_output === undefined ? null : json(c.expected_output),
                json(next.metadata),
              ],
            );
          }
        }
        await tx.query(
          `UPDATE dataset_items SET version = $4,
             archived_at = CASE WHEN $5::boolean IS NULL THEN archived_at WHEN $5 THEN COALESCE(archived_at, now()) ELSE NULL END,
             updated_at = now()
           WHERE project_id = $1 AND dataset_id = $2 AND item_id = $3`,
          [projectId, datasetId, itemId, version, change.archived ?? null],
        );
        // Read back under the same row lock: the version this request wrote, never a later
        // request's (a read after the commit could see a concurrent edit's).
        const [row] = await tx.query<ItemRow>(
          `SELECT ${ITEM_COLUMNS} FROM ${ITEM_FROM} WHERE i.project_id = $1 AND i.dataset_id = $2 AND i.item_id = $3`,
          [projectId, datasetId, itemId],
        );
        return row!;
      });
    },

    /** Every version of an item, newest first. */
    async itemVersions(projectId: string, datasetId: string, itemId: string) {
      await this.getItem(projectId, datasetId, itemId); // 404 for an item that is not the dataset's
      return db.query<{ version: number; input: unknown; expected_output: unknown; metadata: Record<string, unknown>; created_at: Date }>(
        `SELECT version, input, expected_output, metadata, created_at FROM dataset_item_versions
         WHERE project_id = $1 AND item_id = $2 ORDER BY version DESC`,
        [projectId, itemId],
      );
    },

    /** Of these items of the dataset, the current version and order of each (for run links). */
    async currentVersions(projectId: string, datasetId: string, itemIds: string[]): Promise<Map<string, { version: number; seq: string }>> {
      const ids = itemIds.filter(isUuid);
      if (ids.length === 0) return new Map();
      const rows = await db.query<{ item_id: string; version: number; seq: string }>(
        `SELECT item_id, version, seq::text AS seq FROM dataset_items WHERE project_id = $1 AND dataset_id = $2 AND item_id = ANY($3::uuid[])`,
        [projectId, datasetId, ids],
      );
      return new Map(rows.map((r) => [r.item_id, { version: r.version, seq: r.seq }]));
    },

    /** The content of these (item, version) pairs, by `item_id:version`. */
    async versionsOf(projectId: string, pairs: Array<{ item_id: string; version: number }>): Promise<Map<string, ItemContent>> {
      if (pairs.length === 0) return new Map();
      const rows = await db.query<{
        item_id: string;
        version: number;
        input: unknown;
        expected_output: unknown;
        metadata: Record<string, unknown>;
      }>(
        `SELECT v.item_id, v.version, v.input, v.expected_output, v.metadata FROM dataset_item_versions v
         JOIN unnest($2::uuid[], $3::int[]) AS p(item_id, version) ON p.item_id = v.item_id AND p.version = v.version
         WHERE v.project_id = $1`,
        [projectId, pairs.map((p) => p.item_id), pairs.map((p) => p.version)],
      );
      return new Map(
        rows.map((r) => [`${r.item_id}:${r.version}`, { input: r.input, expected_output: r.expected_output, metadata: r.metadata }]),
      );
    },

    /** Live (not archived) items of a dataset: how many. */
    async liveItemCount(projectId: string, datasetId: string): Promise<number> {
      const [r] = await db.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM dataset_items WHERE project_id = $1 AND dataset_id = $2 AND archived_at IS NULL',
        [projectId, datasetId],
      );
      return Number(r?.n ?? 0);
    },
  };
}

export type DatasetRepository = ReturnType<typeof createDatasetRepository>;
