import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('config', () => {
  it('has the defaults of the README configuration table with nothing set', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.otlpGrpcPort).toBe(4317);
    expect(c.host).toBe('127.0.0.1');
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.clickhouse.url).toBeUndefined();
    expect(c.databaseUrl).toBeUndefined();
    expect(c.redisUrl).toBeUndefined();
    expect(c.authRequired).toBe(true);
    expect(c.idp.projectClaim).toBe('project_id');
    expect(c.idp.roleClaim).toBe('role');
    expect(c.limits.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(c.limits.maxInflatedBytes).toBe(64 * 1024 * 1024);
  });

  it('reads the server URLs and flags', () => {
    const c = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://u:p@db:5432/traceloom',
      REDIS_URL: 'redis://cache:6379',
      CLICKHOUSE_URL: 'http://ch:8123',
      CLICKHOUSE_CLUSTER: 'main',
      CLICKHOUSE_DATABASE: 'traceloom',
      AUTH_REQUIRED: 'false',
      IDP_JWT_ISSUER: 'https://idp.example.com/',
      IDP_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
    });
    expect(c.port).toBe(9000);
    expect(loadConfig({ OTLP_GRPC_PORT: '0' }).otlpGrpcPort).toBe(0);
    expect(c.databaseUrl).toBe('postgres://u:p@db:5432/traceloom');
    expect(c.redisUrl).toBe('redis://cache:6379');
    expect(c.clickhouse).toMatchObject({
      url: 'http://ch:8123',
      cluster: 'main',
      database: 'traceloom',
      topology: 'cluster',
      readUrl: undefined,
    });
    expect(c.authRequired).toBe(false);
    expect(c.idp.jwksUrl).toContain('jwks.json');
  });

  it('reads the ClickHouse topology (CLICKHOUSE_TOPOLOGY, cluster implied by CLICKHOUSE_CLUSTER) and CLICKHOUSE_READ_URL', () => {
    expect(loadConfig({}).clickhouse).toMatchObject({ topology: 'single', cluster: undefined, readUrl: undefined });
    const url = { CLICKHOUSE_URL: 'https://ch:8443' };
    expect(loadConfig({ ...url, CLICKHOUSE_TOPOLOGY: 'cloud' }).clickhouse).toMatchObject({ topology: 'cloud', cluster: undefined });
    expect(loadConfig({ ...url, CLICKHOUSE_TOPOLOGY: 'cluster', CLICKHOUSE_CLUSTER: 'c2' }).clickhouse).toMatchObject({
      topology: 'cluster',
      cluster: 'c2',
    });
    expect(loadConfig({ ...url, CLICKHOUSE_READ_URL: 'https://ro.ch:8443' }).clickhouse).toMatchObject({
      topology: 'single',
      readUrl: 'https://ro.ch:8443',
    });
  });

  const bad: Array<[Record<string, string>, string, RegExp]> = [
    [{ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_TOPOLOGY: 'sharded' }, 'CLICKHOUSE_TOPOLOGY', /single, cluster, cloud/],
    [{ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_TOPOLOGY: 'cluster' }, 'CLICKHOUSE_CLUSTER', /must name the cluster/],
    [
      { CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_TOPOLOGY: 'cloud', CLICKHOUSE_CLUSTER: 'c' },
      'CLICKHOUSE_CLUSTER',
      /ON CLUSTER is wrong/,
    ],
    [{ CLICKHOUSE_TOPOLOGY: 'cloud' }, 'CLICKHOUSE_TOPOLOGY', /CLICKHOUSE_URL/],
    [{ CLICKHOUSE_READ_URL: 'http://ro:8123' }, 'CLICKHOUSE_READ_URL', /CLICKHOUSE_URL/],
    [{ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_READ_URL: 'ftp://ro' }, 'CLICKHOUSE_READ_URL', /http/],
    [{ PORT: 'eighty' }, 'PORT', /integer/],
    [{ PORT: '70000' }, 'PORT', /between 0 and 65535/],
    [{ OTLP_GRPC_PORT: '-1' }, 'OTLP_GRPC_PORT', /integer/],
    [{ AUTH_REQUIRED: 'maybe' }, 'AUTH_REQUIRED', /true or false/],
    [{ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL', /postgres/],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL', /URL/],
    [{ REDIS_URL: 'http://cache' }, 'REDIS_URL', /redis/],
    [{ CLICKHOUSE_URL: 'tcp://ch:9000' }, 'CLICKHOUSE_URL', /http/],
    [{ CLICKHOUSE_CLUSTER: 'main' }, 'CLICKHOUSE_CLUSTER', /CLICKHOUSE_URL/],
    [{ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'x; DROP' }, 'CLICKHOUSE_CLUSTER', /identifier/],
    [{ IDP_JWT_ISSUER: 'https://idp' }, 'IDP_JWKS_URL', /must be set/],
    [{ IDP_JWKS_URL: 'https://idp/jwks' }, 'IDP_JWT_ISSUER', /must be set/],
    [{ MAX_BODY_BYTES: '2048', MAX_INFLATED_BYTES: '1024' }, 'MAX_INFLATED_BYTES', /at least/],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', /one of/],
    [{ AUTH_REQUIRED: 'false', NODE_ENV: 'production' }, 'AUTH_REQUIRED', /production/],
    [{ TRACELOOM_INIT_API_KEY: `tl_${'a'.repeat(40)}` }, 'TRACELOOM_INIT_PROJECT_ID', /must be set/],
    [{ TRACELOOM_INIT_PROJECT_NAME: 'Acme' }, 'TRACELOOM_INIT_PROJECT_ID', /must be set/],
    [{ TRACELOOM_INIT_PROJECT_ID: 'acme corp' }, 'TRACELOOM_INIT_PROJECT_ID', /letters, digits/],
    [{ TRACELOOM_INIT_PROJECT_ID: 'acme', TRACELOOM_INIT_API_KEY: 'sk-my-secret-key' }, 'TRACELOOM_INIT_API_KEY', /"tl_" followed by 40/],
    [
      { TRACELOOM_INIT_PROJECT_ID: 'acme', TRACELOOM_INIT_API_KEY: `tl_${'a'.repeat(39)}` },
      'TRACELOOM_INIT_API_KEY',
      /"tl_" followed by 40/,
    ],
  ];

  it('reads the bootstrap project and key (TRACELOOM_INIT_*), and never echoes a refused key', () => {
    expect(loadConfig({}).init).toBeUndefined();
    const key = `tl_${'Ab1'.repeat(13)}x`;
    expect(
      loadConfig({ TRACELOOM_INIT_PROJECT_ID: 'acme', TRACELOOM_INIT_PROJECT_NAME: 'Acme Inc', TRACELOOM_INIT_API_KEY: key }).init,
    ).toEqual({
      projectId: 'acme',
      projectName: 'Acme Inc',
      apiKey: key,
    });
    expect(loadConfig({ TRACELOOM_INIT_PROJECT_ID: 'acme' }).init).toEqual({
      projectId: 'acme',
      projectName: undefined,
      apiKey: undefined,
    });
    expect(() => loadConfig({ TRACELOOM_INIT_PROJECT_ID: 'acme', TRACELOOM_INIT_API_KEY: 'tl_not-quite-a-secret-key' })).toThrow(
      /^((?!not-quite).)*$/,
    );
  });
  it.each(bad)('refuses %j naming %s', (env, variable, message) => {
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as Error).message).toMatch(new RegExp(`^${variable}: `));
    expect((err as Error).message).toMatch(message);
  });

  it('stops the boot of `npm start` with a message naming the variable', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty', DATABASE_URL: '', REDIS_URL: '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('PORT: must be an integer');
  });
});
