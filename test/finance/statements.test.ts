// Chargeback statements (GET …/statements?month=&by=): per user, agent, API key and tag, the lines
// add up to the project's spend of the month exactly — odd nano-dollar amounts split among several
// tags included, through a correction that moves an execution's tags —; CSV and Parquet downloads
// read back; the scheduled monthly export writes each statement once with its manifest.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromScaled, toScaled } from '../../src/decimal.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { dropTestDatabases, mode, tempDir } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { signV4 } from '../../src/exports/s3-put.ts';
import { createStatementExport } from '../../src/finance/statement-export.ts';
import { createStatementExportStore } from '../../src/finance/statement-export-repository.ts';

let svc: TestService;
const P = '/api/projects/default';
const exportDir = tempDir('traceloom-statements-');
const scratch = tempDir('traceloom-statements-read-');
let k1: string;
let k2: string;

async function exec(body: Record<string, unknown>, apiKey?: string) {
  const r = await getJson(`${svc.url}${P}/executions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(apiKey ? { 'X-API-Key': apiKey } : {}) },
    body: JSON.stringify(body),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

const statement = (by: string, extra = '') => getJson(`${svc.url}${P}/statements?month=2026-08&by=${by}${extra}`);
const sum = (values: string[]) =>
  fromScaled(
    values.reduce((s, v) => s + toScaled(v, 9), 0n),
    9,
  );
const linesOf = (body: any) => Object.fromEntries(body.lines.map((l: any) => [l.value, l]));

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false', EXPORT_DIR: exportDir });
  const key = async (name: string) => {
    const r = await getJson(`${svc.url}${P}/api-keys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body as { key: string; key_id: string };
  };
  const a = await key('team-a');
  const b = await key('team-b');
  k1 = a.key_id;
  k2 = b.key_id;
  const base = { provider: 'openai', model: 'gpt-4o' };
  await exec(
    { ...base, trace_id: 'x1', user_id: 'u1', agent_id: 'a1', tags: ['a'], cost_usd: 0.000000001, started_at: '2026-08-01T00:00:00Z' },
    a.key,
  );
  await exec(
    { ...base, trace_id: 'x2', user_id: 'u1', agent_id: 'a2', tags: ['a', 'b'], cost_usd: 0.000000001, started_at: '2026-08-10T00:00:00Z' },
    a.key,
  );
  await exec({
    ...base,
    trace_id: 'x3',
    user_id: 'u2',
    agent_id: 'a1',
    tags: ['c', 'b', 'a', 'a'],
    cost_usd: 0.000000007,
    tokens_in: 10,
    started_at: '2026-08-15T12:00:00Z',
  });
  await exec(
    { ...base, trace_id: 'x4', cost_usd: 1.234567891, tokens_in: 3, tokens_out: 5, started_at: '2026-08-31T23:59:59.999Z' },
    b.key,
  );
  await exec({
    provider: 'acme',
    model: 'acme-lm',
    trace_id: 'x7',
    user_id: 'u2',
    tags: ['a'],
    tokens_in: 4,
    started_at: '2026-08-20T00:00:00Z',
  });
  // Outside the month.
  await exec({ ...base, trace_id: 'x8', user_id: 'u1', tags: ['a'], cost_usd: 5, started_at: '2026-09-01T00:00:00Z' });
  await exec({ ...base, trace_id: 'x9', user_id: 'u1', tags: ['a'], cost_usd: 5, started_at: '2026-07-31T23:59:59.999Z' });
  // A late correction moves x4 from untagged to two tags: its cost splits 617283946 / 617283945 nano-dollars.
  await correctExecution(svc.stores.clickhouse, 'x4', { tags: ['e', 'd'] });
});

afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`chargeback statements (${mode} mode)`, () => {
  it("every dimension's lines add up to the project's spend of the month exactly", async () => {
    const spend = await getJson(`${svc.url}${P}/spend?start=2026-08-01T00:00:00Z&end=2026-09-01T00:00:00Z`);
    expect(spend.body.total.cost_usd).toBe('1.2345679');
    for (const by of ['user', 'tag', 'agent', 'api_key']) {
      const r = await statement(by);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.total).toEqual({ cost_usd: '1.2345679', executions: 5, tokens_in: 17, tokens_out: 5, unpriced_executions: 1 });
      expect(sum(r.body.lines.map((l: any) => l.cost_usd))).toBe('1.2345679');
      expect(r.body.lines_total_usd).toBe('1.2345679');
      expect(r.body.lines.reduce((s: number, l: any) => s + l.tokens_in, 0)).toBe(17);
      expect(r.body.lines.reduce((s: number, l: any) => s + l.tokens_out, 0)).toBe(5);
      expect(r.body).toMatchObject({ month: '2026-08', dimension: by, allocation: by === 'tag' ? 'even_split' : 'whole' });
    }
  });

  it('users, agents and API keys: each execution under its one value, none under ""', async () => {
    const users = linesOf((await statement('user')).body);
    expect(Object.fromEntries(Object.entries(users).map(([k, l]: [string, any]) => [k, [l.cost_usd, l.executions]]))).toEqual({
      u1: ['0.000000002', 2],
      u2: ['0.000000007', 2],
      '': ['1.234567891', 1],
    });
    const agents = linesOf((await statement('agent')).body);
    expect(agents.a1).toMatchObject({ cost_usd: '0.000000008', executions: 2 });
    expect(agents.a2).toMatchObject({ cost_usd: '0.000000001', executions: 1 });
    expect(agents['']).toMatchObject({ cost_usd: '1.234567891', executions: 2, unpriced_executions: 1 });
    const keys = linesOf((await statement('api_key')).body);
    expect(keys[k1]).toMatchObject({ name: 'team-a', cost_usd: '0.000000002', executions: 2 });
    expect(keys[k2]).toMatchObject({ name: 'team-b', cost_usd: '1.234567891', executions: 1, tokens_in: 3, tokens_out: 5 });
    expect(keys['']).toMatchObject({ name: '', cost_usd: '0.000000007', executions: 2 });
  });

  it('tags: each execution split evenly among its distinct tags, the remainder to the first tags in order', async () => {
    const tags = linesOf((await statement('tag')).body);
    expect(Object.keys(tags).sort()).toEqual(['a', 'b', 'c', 'd', 'e']); // x4's untagged line moved away
    // a: x1 1 + x2 1 (of 1 between a, b) + x3 3 (of 7 among a, b, c) + x7 0
    expect(tags.a).toMatchObject({
      cost_usd: '0.000000005',
      executions: 4,
      shared_executions: 2,
      tokens_in: 4 + 4,
      unpriced_executions: 1,
    });
    expect(tags.b).toMatchObject({ cost_usd: '0.000000002', executions: 2, shared_executions: 2, tokens_in: 3 });
    expect(tags.c).toMatchObject({ cost_usd: '0.000000002', executions: 1, tokens_in: 3 });
    expect(tags.d).toMatchObject({ cost_usd: '0.617283946', executions: 1, tokens_in: 2, tokens_out: 3 });
    expect(tags.e).toMatchObject({ cost_usd: '0.617283945', executions: 1, tokens_in: 1, tokens_out: 2 });
  });

  it('downloads as CSV and Parquet (read back by the engine), with a total line', async () => {
    const csv = await fetch(`${svc.url}${P}/statements?month=2026-08&by=user&format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toContain('statement-default-2026-08-user.csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe(
      'row_type,month,dimension,value,name,cost_usd,executions,tokens_in,tokens_out,unpriced_executions,shared_executions',
    );
    expect(lines).toContain('line,2026-08,user,u1,,0.000000002,2,0,0,0,0');
    expect(lines[lines.length - 1]).toBe('total,2026-08,user,,,1.2345679,5,17,5,1,0');

    const res = await fetch(`${svc.url}${P}/statements?month=2026-08&by=tag&format=parquet`);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
    const file = path.join(scratch, 'tags.parquet');
    fs.writeFileSync(file, bytes);
    const [r] = await svc.stores.clickhouse.query<{ lines: string; total: string; t: string }>(
      `SELECT toString(sumIf(cost_usd, row_type = 'line')) AS lines, toString(anyIf(cost_usd, row_type = 'total')) AS total, toTypeName(any(cost_usd)) AS t
       FROM file({f:String}, 'Parquet')`,
      { f: file },
    );
    expect(r).toEqual({ lines: '1.2345679', total: '1.2345679', t: 'Decimal(38, 9)' });
  });

  it('refuses what is not a month or a dimension', async () => {
    expect((await getJson(`${svc.url}${P}/statements?month=2026-08&by=session`)).status).toBe(400);
    expect((await getJson(`${svc.url}${P}/statements?month=08-2026&by=user`)).status).toBe(400);
    expect((await getJson(`${svc.url}${P}/statements?by=user`)).status).toBe(400);
    const empty = await getJson(`${svc.url}${P}/statements?month=2020-01&by=tag`);
    expect(empty.body).toMatchObject({ lines: [], lines_total_usd: '0', total: { cost_usd: '0', executions: 0 } });
  });

  it('the scheduled export writes each month-end statement once: Parquet, CSV and manifest per dimension', async () => {
    const run = svc.domain.finance.statementExport.run;
    // 2026-09-01 02:00 UTC: August ended more than EXPORT_DELAY_MS (1 h) ago.
    expect(await run(new Date('2026-09-01T02:00:00Z'))).toBe(4);
    expect(await run(new Date('2026-09-01T03:00:00Z'))).toBe(0);
    const dir = path.join(exportDir, 'default', 'statements');
    for (const by of ['user', 'tag', 'agent', 'api_key']) {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, `2026-08.${by}.manifest.json`), 'utf8'));
      expect(manifest).toMatchObject({ project_id: 'default', month: '2026-08', dimension: by, total_usd: '1.2345679' });
      expect(manifest.files.map((f: { path: string }) => f.path)).toEqual([`2026-08.${by}.parquet`, `2026-08.${by}.csv`]);
      const csvText = fs.readFileSync(path.join(dir, `2026-08.${by}.csv`), 'utf8');
      expect(csvText.trim().split('\r\n').pop()).toBe(`total,2026-08,${by},,,1.2345679,5,17,5,1,0`);
      const [r] = await svc.stores.clickhouse.query<{ s: string }>(
        "SELECT toString(sumIf(cost_usd, row_type = 'line')) AS s FROM file({f:String}, 'Parquet')",
        { f: path.join(dir, `2026-08.${by}.parquet`) },
      );
      expect(r!.s).toBe('1.2345679');
    }
    // Before the delay has passed, nothing of the month is due.
    expect(await run(new Date('2026-10-01T00:30:00Z'))).toBe(0);
  });

  it('a statement PUT to an S3-compatible bucket: Parquet, CSV and manifest, each signed (v4)', async () => {
    const puts: Array<{ url: string; body: Buffer; signed: boolean }> = [];
    const bucket = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const h = req.headers;
        const signedNames = /SignedHeaders=([^,]+)/.exec(String(h.authorization))![1]!.split(';');
        const expected = signV4({
          method: req.method!,
          url: new URL(`http://${h.host}${req.url}`),
          headers: Object.fromEntries(signedNames.map((n) => [n, String(h[n])])),
          payloadSha256: String(h['x-amz-content-sha256']),
          accessKeyId: 'AKTEST',
          secretAccessKey: 'secret-test',
          region: 'eu-west-3',
          now: new Date(String(h['x-amz-date']).replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')),
        });
        const payloadOk = crypto.createHash('sha256').update(body).digest('hex') === h['x-amz-content-sha256'];
        puts.push({ url: req.url!, body, signed: expected === h.authorization && payloadOk });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => bucket.listen(0, '127.0.0.1', r));
    try {
      const exporter = createStatementExport({
        config: {
          dir: undefined,
          s3: {
            endpoint: `http://127.0.0.1:${(bucket.address() as AddressInfo).port}`,
            bucket: 'exports',
            region: 'eu-west-3',
            accessKeyId: 'AKTEST',
            secretAccessKey: 'secret-test',
            prefix: 'traceloom/',
          },
          intervalMs: 3_600_000,
          delayMs: 3_600_000,
          catchUpDays: 7,
        },
        scratchDir: tempDir('traceloom-statements-s3-'),
        store: createStatementExportStore(svc.stores.postgres),
        projects: async () => ['default'],
        statements: svc.domain.finance.statements,
        parquet: svc.domain.finance.parquet,
        now: () => new Date(),
        logger: svc.logger,
      });
      const manifest = await exporter.exportStatement('default', '2026-08', 'tag', new Date('2026-09-01T02:00:00Z'));
      expect(puts.map((p) => p.url)).toEqual([
        '/exports/traceloom/default/statements/2026-08.tag.parquet',
        '/exports/traceloom/default/statements/2026-08.tag.csv',
        '/exports/traceloom/default/statements/2026-08.tag.manifest.json',
      ]);
      expect(puts.every((p) => p.signed)).toBe(true);
      expect(JSON.parse(puts[2]!.body.toString('utf8'))).toEqual(manifest);
      expect(manifest.files.map((f) => [f.bytes, f.sha256])).toEqual(
        puts.slice(0, 2).map((p) => [p.body.length, crypto.createHash('sha256').update(p.body).digest('hex')]),
      );
      expect(puts[0]!.body.subarray(0, 4).toString()).toBe('PAR1');
      expect(puts[1]!.body.toString('utf8')).toContain('total,2026-08,tag,,,1.2345679,5,17,5,1,');
    } finally {
      await new Promise((r) => bucket.close(r));
    }
  });
});
