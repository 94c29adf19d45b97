// Parquet exports: the on-demand format=parquet of the export endpoint and the scheduled daily
// export to EXPORT_DIR, each read back by the engine (file(..., Parquet)) and compared with the
// JSON Lines export of the same executions; the manifest names what was written; each day once.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromClickHouseTime } from '../../src/time.ts';
import { dropTestDatabases, mode, tempDir } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { signV4 } from '../../src/exports/s3-put.ts';

let svc: TestService;
/** The API key that sent y2 (the others come from the dev user: no key). */
let keyId: string;
const exportDir = tempDir('traceloom-exports-');
const scratch = tempDir('traceloom-parquet-read-');
const P = '/api/projects/default';
const json = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function exec(body: Record<string, unknown>, apiKey?: string) {
  const r = await getJson(`${svc.url}${P}/executions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(apiKey ? { 'X-API-Key': apiKey } : {}) },
    body: JSON.stringify(body),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

interface ReadBack {
  item: Record<string, unknown>;
  attribution: { user_id: string; session_id: string; tags: string[]; metadata: Record<string, string>; api_key_id: string };
}

/** A Parquet file read by the engine, in the JSON Lines item shape (and the attribution columns apart). */
async function readParquet(file: string): Promise<ReadBack[]> {
  const rows = await svc.stores.clickhouse.query<Record<string, any>>(
    `SELECT trace_id, agent_id, provider, model, toString(tokens_in) AS tokens_in, toString(tokens_out) AS tokens_out, toString(latency_ms) AS latency_ms,
       toString(cost_usd) AS cost_t, toTypeName(cost_usd) AS cost_type, cost_source, status, toString(started_at) AS started_t, toTypeName(started_at) AS started_type,
       has_templates, template_count, span_count, source, user_id, session_id, tags, metadata, api_key_id
     FROM file({f:String}, 'Parquet')`,
    { f: file },
  );
  return rows.map((r) => {
    expect(r.cost_type).toContain('Decimal(18, 9)');
    expect(r.started_type).toContain("DateTime64(3, 'UTC')");
    return {
      item: {
        trace_id: r.trace_id,
        agent_id: r.agent_id,
        provider: r.provider,
        model: r.model,
        tokens_in: Number(r.tokens_in),
        tokens_out: Number(r.tokens_out),
        latency_ms: Number(r.latency_ms),
        cost_usd: Number(r.cost_t),
        cost_source: r.cost_source,
        status: r.status,
        started_at: fromClickHouseTime(r.started_t),
        has_templates: Boolean(r.has_templates),
        template_count: Number(r.template_count),
        span_count: Number(r.span_count),
        source: r.source,
      },
      attribution: { user_id: r.user_id, session_id: r.session_id, tags: r.tags, metadata: r.metadata, api_key_id: r.api_key_id },
    };
  });
}

async function jsonl(query: string): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${svc.url}${P}/executions/export?format=jsonl${query}`);
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function parquet(query: string): Promise<ReadBack[]> {
  const res = await fetch(`${svc.url}${P}/executions/export?format=parquet${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/vnd.apache.parquet');
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.parquet`);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return readParquet(file);
}

const byTrace = <T extends { trace_id?: unknown }>(a: T, b: T) => String(a.trace_id).localeCompare(String(b.trace_id));

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false', EXPORT_DIR: exportDir, EXPORT_DELAY_MS: '0' });
  // The export job also runs by itself (at boot, then hourly) on the real clock: it writes the real
  // recent days; the days of this test are in 2025, far from them, and runs below name their time.
  expect((await json('POST', '/prompts', { prompt_id: 'support', type: 'text', template: 'x' })).status).toBe(201);
  const key = await json('POST', '/api-keys', { name: 'exporter' });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  keyId = key.body.key_id;
  await exec({
    trace_id: 'y1',
    provider: 'openai',
    model: 'gpt-x',
    agent_id: 'a1',
    user_id: 'u1',
    session_id: 's1',
    tags: ['prod', 'eu'],
    metadata: { plan: 'pro' },
    cost_usd: 0.000123456,
    tokens_in: 10,
    tokens_out: 5,
    latency_ms: 120,
    started_at: '2025-06-14T00:00:00.000Z',
    template_usages: [{ prompt_id: 'support' }],
  });
  await exec(
    {
      trace_id: 'y2',
      provider: 'anthropic',
      model: 'claude-y',
      user_id: 'u2',
      cost_usd: 1.5,
      status: 'error',
      error_message: 'boom',
      started_at: '2025-06-14T23:59:59.999Z',
    },
    key.body.key,
  );
  await exec({ trace_id: 'y3', provider: 'acme', model: 'unknown-zz', tokens_in: 7, started_at: '2025-06-14T12:00:00.000Z' });
  await exec({ trace_id: 'd10', cost_usd: 0.2, started_at: '2025-06-10T08:00:00.000Z' });
  await exec({ trace_id: 'today', cost_usd: 0.3, started_at: '2025-06-15T08:00:00.000Z' });
  await exec({ trace_id: 'old', cost_usd: 0.4, started_at: '2025-06-01T08:00:00.000Z' });
  // a late correction of y1: the export holds its live version only
  const [row] = await svc.stores.clickhouse.query<Record<string, unknown>>(
    "SELECT * FROM executions WHERE project_id = 'default' AND trace_id = 'y1' AND sign = 1",
  );
  await svc.stores.clickhouse.insert('executions', [
    { ...row, sign: -1 },
    { ...row, cost_usd: '0.000654321', version: 2, sign: 1 },
  ]);
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
  fs.rmSync(exportDir, { recursive: true, force: true });
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe(`Parquet exports (${mode} mode)`, () => {
  it('format=parquet, read back by the engine, equals the JSON Lines export (typed columns, attribution added)', async () => {
    const all = await parquet('');
    const lines = await jsonl('');
    expect(lines).toHaveLength(6);
    expect(all.map((r) => r.item).sort(byTrace)).toEqual([...lines].sort(byTrace));
    expect(all.find((r) => r.item.trace_id === 'y1')).toMatchObject({
      item: { cost_usd: 0.000654321 },
      attribution: { user_id: 'u1', session_id: 's1', tags: ['prod', 'eu'], metadata: { plan: 'pro' }, api_key_id: '' },
    });
    // The key that sent an execution, for finance's spend per key outside the service.
    expect(all.find((r) => r.item.trace_id === 'y2')?.attribution.api_key_id).toBe(keyId);
    const filtered = await parquet('&provider=openai,anthropic&start=2025-06-14T00:00:00Z');
    expect(filtered.map((r) => r.item).sort(byTrace)).toEqual(
      (await jsonl('&provider=openai,anthropic&start=2025-06-14T00:00:00Z')).sort(byTrace),
    );
    expect(filtered).toHaveLength(2);
    const none = await parquet('&user_id=nobody');
    expect(none).toEqual([]);
    expect((await fetch(`${svc.url}${P}/executions/export?format=xlsx`)).status).toBe(400);
  });

  it('the daily export writes each due day once, with a manifest, equal to the JSON Lines export of that day', async () => {
    const exports = svc.domain.executions.scheduledExport;
    const at = new Date('2025-06-15T12:00:00.000Z');
    expect(await exports.run(at)).toBe(2); // 2025-06-14 (yesterday) and 2025-06-10 (in the catch-up window); not today, not 11-01
    const dir = path.join(exportDir, 'default', 'executions');
    expect(
      fs
        .readdirSync(dir)
        .filter((f) => f.startsWith('2025-'))
        .sort(),
    ).toEqual(['2025-06-10.manifest.json', '2025-06-10.parquet', '2025-06-14.manifest.json', '2025-06-14.parquet']);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, '2025-06-14.manifest.json'), 'utf8'));
    const bytes = fs.statSync(path.join(dir, '2025-06-14.parquet')).size;
    expect(manifest).toMatchObject({
      project_id: 'default',
      day: '2025-06-14',
      start: '2025-06-14T00:00:00.000Z',
      end: '2025-06-15T00:00:00.000Z',
      format: 'parquet',
      files: [{ path: '2025-06-14.parquet', rows: 3, bytes }],
      exported_at: '2025-06-15T12:00:00.000Z',
    });
    expect(manifest.files[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    const day = await readParquet(path.join(dir, '2025-06-14.parquet'));
    expect(day.map((r) => r.item).sort(byTrace)).toEqual(
      (await jsonl('&start=2025-06-14T00:00:00Z&end=2025-06-15T00:00:00Z')).sort(byTrace),
    );
    expect(await exports.run(at)).toBe(0); // once per day

    // Two days later: today's day is due now, and the empty day after it gets a manifest of 0 rows.
    expect(await exports.run(new Date('2025-06-17T00:30:00.000Z'))).toBe(2);
    const empty = JSON.parse(fs.readFileSync(path.join(dir, '2025-06-16.manifest.json'), 'utf8'));
    expect(empty.files[0].rows).toBe(0);
    expect(await readParquet(path.join(dir, '2025-06-16.parquet'))).toEqual([]);
    expect((await readParquet(path.join(dir, '2025-06-15.parquet'))).map((r) => r.item.trace_id)).toEqual(['today']);
  });

  it('the daily export PUTs the file and its manifest to an S3-compatible bucket, signed (v4)', async () => {
    const puts: Array<{ url: string; headers: http.IncomingHttpHeaders; body: Buffer; signed: boolean }> = [];
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
        puts.push({ url: req.url!, headers: h, body, signed: expected === h.authorization && payloadOk });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => bucket.listen(0, '127.0.0.1', r));
    const other = await startTestService({
      AUTH_REQUIRED: 'false',
      EXPORT_DELAY_MS: '0',
      EXPORT_INTERVAL_MS: '86400000',
      EXPORT_S3_ENDPOINT: `http://127.0.0.1:${(bucket.address() as AddressInfo).port}`,
      EXPORT_S3_BUCKET: 'exports',
      EXPORT_S3_REGION: 'eu-west-3',
      EXPORT_S3_ACCESS_KEY_ID: 'AKTEST',
      EXPORT_S3_SECRET_ACCESS_KEY: 'secret-test',
      EXPORT_S3_PREFIX: 'traceloom/',
    });
    try {
      const r = await fetch(`${other.url}${P}/executions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ trace_id: 's3-1', cost_usd: 0.5, started_at: '2025-07-01T10:00:00Z' }),
      });
      expect(r.status).toBe(201);
      expect(await other.domain.executions.scheduledExport.run(new Date('2025-07-02T06:00:00Z'))).toBe(1);
      const mine = puts.filter((p) => p.url.includes('2025-07-01'));
      expect(mine.map((p) => p.url)).toEqual([
        '/exports/traceloom/default/executions/2025-07-01.parquet',
        '/exports/traceloom/default/executions/2025-07-01.manifest.json',
      ]);
      expect(mine.every((p) => p.signed)).toBe(true);
      const manifest = JSON.parse(mine[1]!.body.toString('utf8'));
      expect(manifest.files[0]).toMatchObject({
        rows: 1,
        bytes: mine[0]!.body.length,
        sha256: crypto.createHash('sha256').update(mine[0]!.body).digest('hex'),
      });
    } finally {
      await other.close();
      await new Promise((r) => bucket.close(r));
    }
  });
});
