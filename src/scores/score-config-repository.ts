// Score configs (POST/GET/PUT /api/projects/{pid}/score-configs; docs/scores.md): what a score of a
// name may hold — its data type, a numeric range, or a list of categories. A config's type, range
// and categories never change under the scores that used it: PUT changes only the description and
// whether it is archived; a new rule is a new config, once the old one is archived.
import crypto from 'node:crypto';
import { conflict, notFound, unprocessable } from '../errors.ts';
import type { Queryable } from '../stores/postgres.ts';

export type ScoreDataType = 'NUMERIC' | 'CATEGORICAL' | 'BOOLEAN';

export interface ScoreConfigInput {
  name: string;
  data_type: ScoreDataType;
  min_value?: number;
  max_value?: number;
  categories?: string[];
  description?: string;
}

export interface ScoreConfigUpdate {
  description?: string | null;
  archived?: boolean;
  /** Present to say it cannot change: 409. */
  data_type?: ScoreDataType;
  min_value?: number | null;
  max_value?: number | null;
  categories?: string[] | null;
  name?: string;
}

export interface ScoreConfig {
  config_id: string;
  name: string;
  data_type: ScoreDataType;
  min_value: number | null;
  max_value: number | null;
  categories: string[] | null;
  description: string | null;
  archived: boolean;
  created_at: string;
  updated_at: string;
}

type Row = {
  config_id: string;
  name: string;
  data_type: ScoreDataType;
  min_value: number | null;
  max_value: number | null;
  categories: string[] | null;
  description: string | null;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = 'config_id, name, data_type, min_value, max_value, categories, description, archived, created_at, updated_at';

const present = (r: Row): ScoreConfig => ({
  config_id: r.config_id,
  name: r.name,
  data_type: r.data_type,
  min_value: r.min_value,
  max_value: r.max_value,
  categories: r.categories,
  description: r.description,
  archived: r.archived,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the input says that cannot hold together (422), or undefined. */
function problemOf(c: ScoreConfigInput): string | undefined {
  const range = c.min_value !== undefined || c.max_value !== undefined;
  if (c.data_type !== 'NUMERIC' && range) return `min_value, max_value: only a NUMERIC config has a range (this one is ${c.data_type})`;
  if (c.data_type !== 'CATEGORICAL' && c.categories !== undefined)
    return `categories: only a CATEGORICAL config has categories (this one is ${c.data_type})`;
  if (c.data_type === 'CATEGORICAL' && !c.categories?.length) return 'categories: a CATEGORICAL config needs at least one category';
  if (c.min_value !== undefined && c.max_value !== undefined && c.min_value > c.max_value)
    return `max_value: must be >= min_value (${c.min_value})`;
  if (c.categories && new Set(c.categories).size !== c.categories.length) return 'categories: must not repeat a category';
  return undefined;
}

export function createScoreConfigs(db: Queryable) {
  return {
    async create(projectId: string, input: ScoreConfigInput): Promise<ScoreConfig> {
      const problem = problemOf(input);
      if (problem) throw unprocessable(problem);
      const rows = await db.query<Row>(
        `INSERT INTO score_configs (config_id, project_id, name, data_type, min_value, max_value, categories, description)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT DO NOTHING
         RETURNING ${COLUMNS}`,
        [
          crypto.randomUUID(),
          projectId,
          input.name,
          input.data_type,
          input.min_value ?? null,
          input.max_value ?? null,
          input.categories ? JSON.stringify(input.categories) : null,
          input.description ?? null,
        ],
      );
      if (!rows[0]) throw conflict(`A live score config named "${input.name}" exists; archive it first`);
      return present(rows[0]);
    },

    async list(projectId: string, includeArchived: boolean): Promise<ScoreConfig[]> {
      const rows = await db.query<Row>(
        `SELECT ${COLUMNS} FROM score_configs WHERE project_id = $1 AND ($2 OR NOT archived) ORDER BY name, created_at`,
        [projectId, includeArchived],
      );
      return rows.map(present);
    },

    async get(projectId: string, configId: string): Promise<ScoreConfig> {
      if (!UUID.test(configId)) throw notFound('Score config');
      const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM score_configs WHERE project_id = $1 AND config_id = $2`, [
        projectId,
        configId,
      ]);
      if (!row) throw notFound('Score config');
      return present(row);
    },

    async update(projectId: string, configId: string, input: ScoreConfigUpdate): Promise<ScoreConfig> {
      const current = await this.get(projectId, configId);
      // The rule a config holds never changes under the scores that used it.
      for (const field of ['name', 'data_type', 'min_value', 'max_value', 'categories'] as const) {
        if (input[field] !== undefined && JSON.stringify(input[field]) !== JSON.stringify(current[field]))
          throw conflict(`${field}: a score config's ${field} cannot change under its scores; archive it and create another`);
      }
      const rows = await db
        .query<Row>(
          `UPDATE score_configs SET description = CASE WHEN $3 THEN $4 ELSE description END,
           archived = COALESCE($5, archived), updated_at = now()
         WHERE project_id = $1 AND config_id = $2
         RETURNING ${COLUMNS}`,
          [projectId, configId, input.description !== undefined, input.description ?? null, input.archived ?? null],
        )
        .catch((err: { code?: string }) => {
          if (err.code === '23505') throw conflict(`A live score config named "${current.name}" exists; archive it first`);
          throw err;
        });
      if (!rows[0]) throw notFound('Score config');
      return present(rows[0]);
    },

    /** The live configs of these names, by name. */
    async liveByName(projectId: string, names: string[]): Promise<Map<string, ScoreConfig>> {
      if (names.length === 0) return new Map();
      const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM score_configs WHERE project_id = $1 AND name = ANY($2) AND NOT archived`, [
        projectId,
        names,
      ]);
      return new Map(rows.map((r) => [r.name, present(r)]));
    },
  };
}

export type ScoreConfigs = ReturnType<typeof createScoreConfigs>;
