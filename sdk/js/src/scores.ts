// scores.create: one score or a batch (stored whole or not at all). Each score gets an id here
// when it has none, so a retry after a lost answer updates the same score instead of adding one
// (the service upserts by id).
import type { Http } from './http.ts';

export interface ScoreInput {
  id?: string;
  traceId?: string;
  spanId?: string;
  sessionId?: string;
  name: string;
  value: number | boolean | string;
  dataType?: 'NUMERIC' | 'CATEGORICAL' | 'BOOLEAN';
  comment?: string;
  source?: 'api' | 'annotation' | 'eval' | 'otel';
}

/** As the service answers (schema/api/Score.json). */
export interface Score {
  id: string;
  trace_id: string | null;
  span_id: string | null;
  session_id: string | null;
  name: string;
  data_type: string;
  value: number | boolean | string;
  comment: string | null;
  source: string;
  [field: string]: unknown;
}

function toBody(s: ScoreInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: s.id ?? globalThis.crypto.randomUUID(),
    trace_id: s.traceId,
    span_id: s.spanId,
    session_id: s.sessionId,
    name: s.name,
    value: s.value,
    data_type: s.dataType,
    comment: s.comment,
    source: s.source,
  };
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return body;
}

export class ScoreClient {
  constructor(private readonly http: Http) {}

  create(score: ScoreInput): Promise<Score>;
  create(scores: ScoreInput[]): Promise<Score[]>;
  async create(input: ScoreInput | ScoreInput[]): Promise<Score | Score[]> {
    if (!Array.isArray(input)) return this.http.project<Score>('POST', '/scores', { body: toBody(input) });
    const r = await this.http.project<{ items: Score[] }>('POST', '/scores', { body: input.map(toBody) });
    return r.items;
  }
}
