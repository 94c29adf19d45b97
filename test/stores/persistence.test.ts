// Data written by one run of the service is there for the next run on the same DATA_DIR (or the
// same servers).
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, tempDir, testEnv } from '../helpers/env.ts';
import { getJson, startTestService } from '../helpers/service.ts';

afterAll(() => dropTestDatabases());

function probe(env: Record<string, string>, action: 'write' | 'read', token: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/store-probe.ts', action, token], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe(`persistence (${mode} mode)`, () => {
  it('survives a restart of the process on the same DATA_DIR', () => {
    return (async () => {
      const t = await testEnv({ CHDB_DIR: tempDir('traceloom-chdb-own-') });
      const token = `p-${Date.now()}`;
      const written = probe(t.env, 'write', token);
      expect(written).toEqual({ postgres: [{ name: `probe ${token}` }], clickhouse: [{ n: '1' }] });
      const read = probe(t.env, 'read', token);
      expect(read).toEqual(written);
      // and a different DATA_DIR does not see it
      const other = await testEnv({ CHDB_DIR: tempDir('traceloom-chdb-own-') });
      expect(probe(other.env, 'read', token)).toEqual({ postgres: [], clickhouse: [{ n: '0' }] });
    })();
  }, 240_000); // three processes each boot the stores (two create a PGlite database)

  it('survives a restart of the service in the same process', async () => {
    const t = await testEnv();
    const first = await startTestService({}, { env: t });
    await first.stores.postgres.query("INSERT INTO projects (project_id, name) VALUES ('kept', 'Kept')");
    await first.close();
    const second = await startTestService({}, { env: t });
    try {
      expect((await getJson(`${second.url}/api/health`)).status).toBe(200);
      expect(await second.stores.postgres.query("SELECT name FROM projects WHERE project_id = 'kept'")).toEqual([{ name: 'Kept' }]);
    } finally {
      await second.close();
    }
  });

  it('a second process on the same DATA_DIR is refused while the first runs', async () => {
    if (mode === 'server') {
      // On servers DATA_DIR holds nothing; several API processes share the servers by design.
      const t = await testEnv();
      const a = await startTestService({}, { env: t });
      const b = await startTestService({}, { env: t });
      expect((await getJson(`${b.url}/api/health`)).status).toBe(200);
      await Promise.all([a.close(), b.close()]);
      return;
    }
    const t = await testEnv();
    const svc = await startTestService({}, { env: t });
    try {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, ...t.env, CHDB_DIR: tempDir() },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/is in use by process \d+/);
    } finally {
      await svc.close();
    }
  });
});
