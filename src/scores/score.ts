// A score as sent and as stored (docs/scores.md): a judgement of an execution (by trace id), one of
// its spans, or a session, by a person, code or an LLM judge. Its value is a number (NUMERIC), a
// boolean (BOOLEAN) or a category label (CATEGORICAL); a name with a live config is held to it.
// Stored: `value` (the number; 1/0 for a boolean; 0 for a label) and `label` (the category;
// "true"/"false" for a boolean), so means, rates and label counts are plain aggregates.
import { badRequest, unprocessable } from '../errors.ts';
import { fromClickHouseTime } from '../time.ts';
import type { ScoreConfig, ScoreDataType } from './score-config-repository.ts';

export type ScoreSource = 'api' | 'annotation' | 'eval' | 'otel';

export interface ScoreInput {
  id?: string;
  trace_id?: string;
  span_id?: string;
  session_id?: string;
  name: string;
  value: number | boolean | string;
  data_type?: ScoreDataType;
  comment?: string;
  source?: ScoreSource;
  /** Internal (evaluation events): the label a NUMERIC score also carries. */
  label?: string;
}

/** A score's row in ClickHouse `scores` (without version and sign). */
export interface ScoreRow {
  project_id: string;
  id: string;
  trace_id: string;
  span_id: string;
  session_id: string;
  name: string;
  data_type: ScoreDataType;
  value: number;
  label: string;
  comment: string;
  source: ScoreSource;
  author: string;
  config_id: string;
  created_at: string;
  updated_at: string;
}

export interface Score {
  id: string;
  trace_id: string | null;
  span_id: string | null;
  session_id: string | null;
  name: string;
  data_type: ScoreDataType;
  value: number | boolean | string;
  comment: string | null;
  source: ScoreSource;
  author: string;
  config_id: string | null;
  created_at: string;
  updated_at: string;
}

const typeOfValue = (v: ScoreInput['value']): ScoreDataType =>
  typeof v === 'number' ? 'NUMERIC' : typeof v === 'boolean' ? 'BOOLEAN' : 'CATEGORICAL';

/**
 * The stored fields of a score as sent (`at`: its place in the request, e.g. `scores[3].`, so a
 * problem names the item), checked against its name's live config. 400 for what no score may
 * hold, 422 for what the config refuses.
 */
export function scoreFields(
  s: ScoreInput,
  config: ScoreConfig | undefined,
  at: string,
): Pick<ScoreRow, 'trace_id' | 'span_id' | 'session_id' | 'name' | 'data_type' | 'value' | 'label' | 'comment' | 'source' | 'config_id'> {
  if (!s.trace_id && !s.session_id) throw badRequest(`${at}trace_id: a score needs a trace_id or a session_id`);
  if (s.span_id && !s.trace_id) throw badRequest(`${at}span_id: a span's score needs its trace_id`);
  if (typeof s.value === 'number' && !Number.isFinite(s.value)) throw badRequest(`${at}value: must be a finite number`);
  const sent = typeOfValue(s.value);
  const dataType = s.data_type ?? config?.data_type ?? sent;
  if (config && dataType !== config.data_type)
    throw unprocessable(`${at}data_type: the score config "${config.name}" says ${config.data_type}, not ${dataType}`);
  // A BOOLEAN may come as 0/1, a CATEGORICAL label only as a string, a NUMERIC only as a number.
  const booleanNumber = dataType === 'BOOLEAN' && (s.value === 0 || s.value === 1);
  if (dataType !== sent && !booleanNumber)
    throw (config ? unprocessable : badRequest)(
      `${at}value: a ${dataType} score needs ${dataType === 'NUMERIC' ? 'a number' : dataType === 'BOOLEAN' ? 'true or false' : 'a label (a string)'}, got ${JSON.stringify(s.value)}${config ? ` (score config "${config.name}")` : ''}`,
    );
  let value = 0;
  let label = '';
  if (dataType === 'NUMERIC') {
    value = s.value as number;
    label = s.label ?? '';
    if (config?.min_value != null && value < config.min_value)
      throw unprocessable(`${at}value: must be >= ${config.min_value} (score config "${config.name}")`);
    if (config?.max_value != null && value > config.max_value)
      throw unprocessable(`${at}value: must be <= ${config.max_value} (score config "${config.name}")`);
  } else if (dataType === 'BOOLEAN') {
    value = s.value === true || s.value === 1 ? 1 : 0;
    label = value ? 'true' : 'false';
  } else {
    label = s.value as string;
    if (config?.categories && !config.categories.includes(label))
      throw unprocessable(
        `${at}value: "${label}" is not a category of the score config "${config.name}" (${config.categories.map((c) => JSON.stringify(c)).join(', ')})`,
      );
  }
  return {
    trace_id: s.trace_id ?? '',
    span_id: s.span_id ?? '',
    session_id: s.session_id ?? '',
    name: s.name,
    data_type: dataType,
    value,
    label,
    comment: s.comment ?? '',
    source: s.source ?? 'api',
    config_id: config?.config_id ?? '',
  };
}

/** Whether two rows say the same thing (an upsert that changes nothing writes nothing). */
export function sameScore(a: Omit<ScoreRow, 'author' | 'created_at' | 'updated_at' | 'project_id' | 'id'>, b: typeof a): boolean {
  return (
    a.trace_id === b.trace_id &&
    a.span_id === b.span_id &&
    a.session_id === b.session_id &&
    a.name === b.name &&
    a.data_type === b.data_type &&
    a.value === b.value &&
    a.label === b.label &&
    a.comment === b.comment &&
    a.source === b.source &&
    a.config_id === b.config_id
  );
}

export function presentScore(r: ScoreRow): Score {
  return {
    id: r.id,
    trace_id: r.trace_id || null,
    span_id: r.span_id || null,
    session_id: r.session_id || null,
    name: r.name,
    data_type: r.data_type,
    value: r.data_type === 'NUMERIC' ? Number(r.value) : r.data_type === 'BOOLEAN' ? Number(r.value) === 1 : r.label,
    comment: r.comment || null,
    source: r.source,
    author: r.author,
    config_id: r.config_id || null,
    created_at: fromClickHouseTime(r.created_at),
    updated_at: fromClickHouseTime(r.updated_at),
  };
}
