// Score batches accepted before they are stored (Prefer: respond-async; src/scores/score-log.ts,
// docs/scores.md "Accepted writes"): checked whole and answered 202 once durable, stored in the
// background as the same upserts, nothing of a refused batch kept, and a batch accepted by a
// process that stopped before storing it stored by the next one.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { WriteAheadLog } from '../../src/stores/write-ahead-log.ts';
import type { ScoreLogHeader } from '../../src/scores/score-log.ts';

afterAll(() => dropTestDatabases());

const caller =
  (svc: TestService) =>
  (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    getJson(`${svc.url}/api/projects/default${p}`, {
      method,
      headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
const ASYNC = { Prefer: 'respond-async' };
const rows = async (svc: TestService, ids: string[]) =>
  (
    await svc.stores.clickhouse.query<{ id: string; sign: number }>(
      "SELECT id, sign FROM scores WHERE project_id = 'default' AND id IN {ids:Array(String)} ORDER BY id",
      { ids },
    )
  ).map((r) => `${r.id}:${Number(r.sign)}`);

describe(`scores accepted before they are stored (${mode} mode)`, () => {
  it('202 with the ids once durable; stored as upserts (a batch sent again writes nothing); a bad batch keeps nothing', async () => {
    const svc = await startTestService();
    try {
      const call = caller(svc);
      const batch = [
        { id: 'acc-1', trace_id: 'trace-acc', name: 'helpful', value: 0.25 },
        { trace_id: 'trace-acc', name: 'resolved', value: true, comment: 'made id' },
      ];
      const accepted = await call('POST', '/scores', batch, ASYNC);
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      expect(accepted.headers.get('preference-applied')).toBe('respond-async');
      expect(accepted.body.accepted).toBe(2);
      expect(accepted.body.ids[0]).toBe('acc-1');
      const made = accepted.body.ids[1] as string;
      expect(made).toMatch(/^[0-9a-f-]{36}$/);
      await svc.domain.flush();
      const listed = await call('GET', '/scores?trace_id=trace-acc');
      expect(listed.body.items.map((s: { id: string; value: number }) => `${s.id}=${s.value}`).sort()).toEqual(
        [`acc-1=0.25`, `${made}=true`].sort(),
      );
      expect((await call('GET', `/scores/${made}`)).body).toMatchObject({ name: 'resolved', data_type: 'BOOLEAN', comment: 'made id' });

      // The same batch (its client id) again: an upsert of what is stored writes nothing; a new value updates.
      expect((await call('POST', '/scores', [batch[0]], ASYNC)).status).toBe(202);
      await svc.domain.flush();
      expect(await rows(svc, ['acc-1'])).toEqual(['acc-1:1']);
      expect((await call('POST', '/scores', { ...batch[0], value: 0.75 }, ASYNC)).status).toBe(202);
      await svc.domain.flush();
      expect((await rows(svc, ['acc-1'])).sort()).toEqual(['acc-1:-1', 'acc-1:1', 'acc-1:1']); // the row, its cancel row, the new row
      expect((await call('GET', '/scores/acc-1')).body).toMatchObject({ value: 0.75 });

      // Checked whole before it is accepted: 422 naming the item and field, nothing kept.
      expect((await call('POST', '/score-configs', { name: 'graded', data_type: 'NUMERIC', min_value: 0, max_value: 1 })).status).toBe(201);
      const bad = await call(
        'POST',
        '/scores',
        [
          { id: 'acc-bad-1', trace_id: 'trace-acc', name: 'graded', value: 0.5 },
          { id: 'acc-bad-2', trace_id: 'trace-acc', name: 'graded', value: 2 },
        ],
        ASYNC,
      );
      expect(bad.status).toBe(422);
      expect(bad.body.detail).toBe('scores[1].value: must be <= 1 (score config "graded")');
      await svc.domain.flush();
      expect(await rows(svc, ['acc-bad-1', 'acc-bad-2'])).toEqual([]);

      // A write of an accepted id sent right after without the preference, and a delete, come after it.
      expect((await call('POST', '/scores', { id: 'acc-3', trace_id: 'trace-acc', name: 'helpful', value: 0.1 }, ASYNC)).status).toBe(202);
      const after = await call('POST', '/scores', { id: 'acc-3', trace_id: 'trace-acc', name: 'helpful', value: 0.9 });
      expect(after.status).toBe(201);
      expect(after.body).toMatchObject({ id: 'acc-3', value: 0.9 });
      expect((await call('POST', '/scores', { id: 'acc-4', trace_id: 'trace-acc', name: 'helpful', value: 0.1 }, ASYNC)).status).toBe(202);
      expect((await call('DELETE', '/scores/acc-4')).status).toBe(204);
      await svc.domain.flush();
      expect((await call('GET', '/scores/acc-3')).body).toMatchObject({ value: 0.9 });
      expect((await call('GET', '/scores/acc-4')).status).toBe(404);

      // Without the preference, the answer is the stored scores, as always.
      const plain = await call(
        'POST',
        '/scores',
        { id: 'acc-2', trace_id: 'trace-acc', name: 'helpful', value: 1 },
        { Prefer: 'return=representation' },
      );
      expect(plain.status).toBe(201);
      expect(plain.body).toMatchObject({ id: 'acc-2', value: 1 });
    } finally {
      await svc.close();
    }
  });

  it('a batch accepted by a process that stopped before storing it is stored by the next one, once', async () => {
    const env = await testEnv();
    // What a process leaves when it stops after the fsync, before its loader stored the batch: a
    // record of the scores log never marked stored (written here with the log itself).
    const log = new WriteAheadLog<ScoreLogHeader>(
      path.join(env.config.ingest.logDir, 'scores'),
      { segmentBytes: 1 << 20, maxPendingBytes: 1 << 20, maxPendingRows: 10_000, maxMemoryBytes: 1 << 20 },
      (h) => h.n,
    );
    log.open();
    const scores = [1, 2, 3].map((i) => ({
      id: `replayed-${i}`,
      trace_id: 'trace-replayed',
      span_id: '',
      session_id: '',
      name: 'helpful',
      data_type: 'NUMERIC',
      value: i / 4,
      label: '',
      comment: '',
      source: 'api',
      config_id: '',
    }));
    await log.append({ p: 'default', a: 'dev', n: scores.length }, Buffer.from(JSON.stringify(scores)));
    await log.close();

    const svc = await startTestService({}, { env });
    try {
      await svc.domain.flush();
      const listed = await caller(svc)('GET', '/scores?trace_id=trace-replayed');
      expect(listed.body.items.map((s: { id: string; author: string }) => `${s.id}/${s.author}`).sort()).toEqual([
        'replayed-1/dev',
        'replayed-2/dev',
        'replayed-3/dev',
      ]);
    } finally {
      await svc.close();
    }
    // Stored and marked: a third start replays nothing, and nothing is written twice.
    const again = await startTestService({}, { env });
    try {
      await again.domain.flush();
      expect(await rows(again, ['replayed-1', 'replayed-2', 'replayed-3'])).toEqual(['replayed-1:1', 'replayed-2:1', 'replayed-3:1']);
    } finally {
      await again.close();
    }
  });
});
