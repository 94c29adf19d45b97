// A cut import says what it stored, and a retry stores nothing twice (issue 39, defect 4; docs/datasets.md,
// "Import and export"). Over real HTTP on loopback: a client that goes away midway, a retry of the
// whole file with the same import_id, an import slower than the request deadline, a stalled one.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { jsonCaller, serviceForFile } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

// A short request deadline and idle limit, so the test can outlast both.
const svc = serviceForFile({ REQUEST_TIMEOUT_MS: '1000', STREAM_IDLE_TIMEOUT_MS: '4000' });
const call = jsonCaller(() => `${svc().url}/api/projects/default`);

const line = (i: number) => `${JSON.stringify({ input: { case: i }, expected_output: `answer ${i}` })}\n`;
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => line(from + k)).join('');
const dataset = async (name: string) => (await call('POST', '/datasets', { name })).body.dataset_id as string;

/** A streamed POST the test writes into by hand; `answer` settles with the status and body, or the error. */
function openUpload(path: string, contentType = 'application/x-ndjson') {
  const u = new URL(`${svc().url}/api/projects/default${path}`);
  const req = http.request({
    host: u.hostname,
    port: u.port,
    path: u.pathname + u.search,
    method: 'POST',
    headers: { 'Content-Type': contentType },
  });
  const answer = new Promise<{ status: number; body: any } | { error: string }>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
  });
  return { req, answer };
}

async function storedInputs(datasetId: string): Promise<number[]> {
  const r = await fetch(`${svc().url}/api/projects/default/datasets/${datasetId}/items/export`);
  return (await r.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { input: { case: number } }).input.case);
}

describe(`a cut import, then a retry (${mode} mode)`, () => {
  it('a client gone midway: GET says what was stored; the whole file again ends with each line once', async () => {
    const id = await dataset('cut');
    const n = 5_000;
    const path = `/datasets/${id}/items/import?import_id=file-1`;
    const first = openUpload(path);
    first.req.write(lines(0, 2_500));
    // Progress shows while the import runs: two batches of 1,000 committed.
    const running = await until(async () => {
      const r = await call('GET', `/datasets/${id}/imports/file-1`);
      return r.status === 200 && r.body.imported >= 2_000 && r.body;
    }, 'two batches committed');
    expect(running.status).toBe('running');
    // Half a line, then the client goes away.
    first.req.write('{"input": {"case": 25');
    first.req.destroy();
    expect(await first.answer).toHaveProperty('error');

    const cut = await until(async () => {
      const r = await call('GET', `/datasets/${id}/imports/file-1`);
      return r.body.status !== 'running' && r.body;
    }, 'the import to be marked cut');
    expect(cut).toMatchObject({
      import_id: 'file-1',
      dataset_id: id,
      format: 'jsonl',
      status: 'interrupted',
      rejected_count: 0,
      attempts: 1,
    });
    expect(cut.error).toMatch(/broke off|ended early/);
    // What it says was stored is what is stored: lines 1..last_line (every line here is an item), the half line none.
    expect(cut.last_line).toBeGreaterThanOrEqual(2_000);
    expect(cut.last_line).toBeLessThanOrEqual(2_500);
    expect(cut.imported).toBe(cut.last_line);
    const afterCut = await storedInputs(id);
    expect(afterCut).toEqual(Array.from({ length: cut.last_line }, (_, k) => k));
    expect((await call('GET', `/datasets/${id}/imports`)).body.items.map((i: { import_id: string }) => i.import_id)).toEqual(['file-1']);

    // The whole file again, same import_id: the settled lines are read past, the rest stored.
    const retry = openUpload(path);
    retry.req.end(lines(0, n));
    const done = (await retry.answer) as { status: number; body: any };
    expect(done.status, JSON.stringify(done)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', imported: n, rejected_count: 0, last_line: n, attempts: 2 });
    expect(done.body.skipped_lines).toBe(cut.last_line);
    expect(await storedInputs(id)).toEqual(Array.from({ length: n }, (_, k) => k));

    // And once more after it completed: nothing is stored twice.
    const again = openUpload(path);
    again.req.end(lines(0, n));
    expect(((await again.answer) as { body: any }).body).toMatchObject({ status: 'completed', imported: n, skipped_lines: n });
    expect((await call('GET', `/datasets/${id}`)).body.items).toBe(n);
  });

  it('an import that takes longer than the request deadline completes; a slow JSON body is cut', async () => {
    const id = await dataset('slow');
    const up = openUpload(`/datasets/${id}/items/import?import_id=slow`);
    for (let i = 0; i < 10; i++) {
      up.req.write(lines(i * 10, i * 10 + 10));
      await new Promise((r) => setTimeout(r, 250)); // 2.5 s in all, the deadline is 1 s
    }
    up.req.end();
    const done = (await up.answer) as { status: number; body: any };
    expect(done.status, JSON.stringify(done)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', imported: 100 });

    // Any other route keeps the deadline: half a JSON body, then silence, is cut.
    const slow = openUpload('/datasets', 'application/json');
    slow.req.write('{"name": "sl');
    const started = Date.now();
    const answer = await slow.answer;
    expect(answer).toHaveProperty('error');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a stalled import is cut after STREAM_IDLE_TIMEOUT_MS and says what it stored', async () => {
    const id = await dataset('stalled');
    const up = openUpload(`/datasets/${id}/items/import?import_id=stalled`);
    up.req.write(lines(0, 1_500));
    expect(await up.answer).toHaveProperty('error'); // the service closes the connection after 4 s without a byte
    const cut = await until(async () => {
      const r = await call('GET', `/datasets/${id}/imports/stalled`);
      return r.body.status !== 'running' && r.body;
    }, 'the stalled import to be marked cut');
    expect(cut).toMatchObject({ status: 'interrupted', imported: 1_500, last_line: 1_500 });
    expect((await call('GET', `/datasets/${id}`)).body.items).toBe(1_500);
  });

  it('bad input: an import_id that is not a token is a 400, an unknown import a 404, another format a 409', async () => {
    const id = await dataset('bad');
    const bad = await fetch(`${svc().url}/api/projects/default/datasets/${id}/items/import?import_id=${encodeURIComponent('a b')}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body: line(1),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ detail: expect.stringMatching(/import_id/) });
    const missing = await call('GET', `/datasets/${id}/imports/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: expect.any(String) });
    const ok = await fetch(`${svc().url}/api/projects/default/datasets/${id}/items/import?import_id=f`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body: line(1),
    });
    expect(((await ok.json()) as { import_id: string }).import_id).toBe('f');
    const csv = await fetch(`${svc().url}/api/projects/default/datasets/${id}/items/import?import_id=f`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/csv' },
      body: 'input\nq\n',
    });
    expect(csv.status).toBe(409);
    expect(await csv.json()).toEqual({ detail: expect.stringMatching(/jsonl import/) });
  });
});
