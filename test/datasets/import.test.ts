// Importing and exporting items (docs/datasets.md, "Import and export"): a malformed CSV keeps
// its good lines and names each bad one by its line number; JSON Lines round-trip through export
// and import; a body that is neither is a 415, a header that names no input a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const base = () => `${svc.url}/api/projects/default`;
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${base()}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const upload = (datasetId: string, contentType: string, body: string | ReadableStream) =>
  getJson(`${base()}/datasets/${datasetId}/items/import`, {
    method: 'POST',
    headers: { 'Content-Type': contentType },
    body,
    ...(typeof body === 'string' ? {} : { duplex: 'half' }),
  } as RequestInit);
const dataset = async (name: string) => (await call('POST', '/datasets', { name })).body.dataset_id as string;
const allItems = async (id: string) => (await call('GET', `/datasets/${id}/items?limit=1000`)).body.items;

describe(`dataset import and export (${mode} mode)`, () => {
  it('a malformed CSV: the good lines are kept, each bad one named by its line number', async () => {
    const id = await dataset('csv');
    const csv = [
      'input,expected_output,metadata', // 1
      'What is 2+2?,4,', // 2 good
      '"A question, with a comma","An ""answer""","{""level"": 2}"', // 3 good
      'only one field', // 4: too few fields
      '"multi', // 5: a quoted field over two lines (good)
      'line question",yes,', // 6
      'bad"quote,x,', // 7: quote inside an unquoted field
      ',empty input,', // 8: no input
      'q,a,not json', // 9: metadata not an object
      'q,a,"{""broken"": "', // 10: metadata starts like JSON, does not parse
      '"closed" then text,a,', // 11: text after a closing quote
      '"{""messages"": [1, 2]}","{""answer"": true}","{""k"": ""v""}"', // 12 good: JSON cells
      'q,a,,extra', // 13: too many fields
      '', // blank: no record
      'last,one,', // 15 good
    ].join('\r\n');
    const r = await upload(id, 'text/csv', csv);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.imported).toBe(5);
    expect(r.body.rejected_count).toBe(7);
    expect(r.body.rejected.map((x: { line: number }) => x.line)).toEqual([4, 7, 8, 9, 10, 11, 13]);
    const byLine = Object.fromEntries(r.body.rejected.map((x: { line: number; detail: string }) => [x.line, x.detail]));
    expect(byLine[4]).toBe('1 fields where the header has 3');
    expect(byLine[7]).toMatch(/^a quote inside an unquoted field/);
    expect(byLine[8]).toBe('input: is required');
    expect(byLine[9]).toBe('metadata: must be a JSON object');
    expect(byLine[10]).toMatch(/^metadata: starts like JSON but does not parse/);
    expect(byLine[11]).toMatch(/^text after a closing quote/);
    expect(byLine[13]).toBe('4 fields where the header has 3');
    const items = await allItems(id);
    expect(
      items.map((i: { input: unknown; expected_output: unknown; metadata: unknown }) => [i.input, i.expected_output, i.metadata]),
    ).toEqual([
      ['What is 2+2?', '4', {}],
      ['A question, with a comma', 'An "answer"', { level: 2 }],
      ['multi\r\nline question', 'yes', {}],
      [{ messages: [1, 2] }, { answer: true }, { k: 'v' }],
      ['last', 'one', {}],
    ]);
  });

  it('CSV input.<variable> columns make an input object; a header without input is a 400, other bodies a 415', async () => {
    const id = await dataset('csv-vars');
    const r = await upload(id, 'text/csv; charset=utf-8', 'input.city,input.unit,expected_output\nParis,C,18\nOslo,F,40\n');
    expect(r.body).toMatchObject({ status: 'completed', imported: 2, rejected_count: 0, rejected: [] });
    expect((await allItems(id)).map((i: { input: unknown }) => i.input)).toEqual([
      { city: 'Paris', unit: 'C' },
      { city: 'Oslo', unit: 'F' },
    ]);
    const noInput = await upload(id, 'text/csv', 'question,answer\nq,a\n');
    expect([noInput.status, noInput.body.detail]).toEqual([400, expect.stringMatching(/^CSV header: unknown column "question"/)]);
    const both = await upload(id, 'text/csv', 'input,input.city\nq,a\n');
    expect(both.status).toBe(400);
    expect((await upload(id, 'application/json', '{"input": 1}')).status).toBe(415);
    expect((await upload('00000000-0000-4000-8000-000000000000', 'text/csv', 'input\nq\n')).status).toBe(404);
    expect((await allItems(id)).length).toBe(2);
  });

  it('JSON Lines: bad lines named, the rest kept; export then import gives the same items', async () => {
    const id = await dataset('jsonl');
    const lines = [
      JSON.stringify({ input: { q: 'one' }, expected_output: 'A', metadata: { tag: 'x' } }), // 1
      '{not json', // 2
      JSON.stringify({ expected_output: 'no input' }), // 3
      '', // 4 blank
      JSON.stringify([1, 2]), // 5
      JSON.stringify({ input: [{ role: 'user', content: 'hi' }], source_trace_id: 'trace-9' }), // 6
      JSON.stringify({ input: 'x', extra: true }), // 7
      JSON.stringify({ input: 'NUL \u0000 inside' }), // 8
      JSON.stringify({ input: 'ünïcødé ✓', expected_output: null, metadata: { n: 1.5, deep: { a: [true, null] } } }), // 9
    ].join('\n');
    const r = await upload(id, 'application/x-ndjson', lines);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.imported).toBe(3);
    expect(r.body.rejected.map((x: { line: number; detail: string }) => [x.line, x.detail])).toEqual([
      [2, expect.stringMatching(/^not valid JSON/)],
      [3, 'input: is required'],
      [5, 'must be a JSON object with an "input"'],
      [7, 'extra: unknown field'],
      [8, 'input: must not contain NUL (U+0000)'],
    ]);

    const exported = await fetch(`${base()}/datasets/${id}/items/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const text = await exported.text();
    expect(text.trim().split('\n')).toHaveLength(3);
    const copy = await dataset('jsonl-copy');
    const back = await upload(copy, 'application/x-ndjson', text);
    expect(back.body).toMatchObject({ status: 'completed', imported: 3, rejected_count: 0, rejected: [] });
    const shape = (items: Array<Record<string, unknown>>) =>
      items.map((i) => ({ input: i.input, expected_output: i.expected_output, metadata: i.metadata, source_trace_id: i.source_trace_id }));
    expect(shape(await allItems(copy))).toEqual(shape(await allItems(id)));
    expect(shape(await allItems(copy))[2]).toEqual({
      input: 'ünïcødé ✓',
      expected_output: null,
      metadata: { n: 1.5, deep: { a: [true, null] } },
      source_trace_id: null,
    });
  });

  it('a streamed import of 3,000 lines sent in small chunks stores every item, in order', async () => {
    const id = await dataset('stream');
    const n = 3_000;
    let i = 0;
    const encoder = new TextEncoder();
    const body = new ReadableStream({
      pull(controller) {
        if (i >= n) return controller.close();
        // Chunks that cut lines (and multi-byte characters) anywhere.
        let chunk = '';
        for (let k = 0; k < 7 && i < n; k++, i++) chunk += `${JSON.stringify({ input: { i, s: 'é✓' } })}\n`;
        const bytes = encoder.encode(chunk);
        controller.enqueue(bytes.subarray(0, 5));
        controller.enqueue(bytes.subarray(5));
      },
    });
    const r = await upload(id, 'application/x-ndjson', body);
    expect(r.body).toMatchObject({ status: 'completed', imported: n, rejected_count: 0, rejected: [] });
    expect((await call('GET', `/datasets/${id}`)).body.items).toBe(n);
    const page = await call(
      'GET',
      `/datasets/${id}/items?limit=1000&cursor=${(await call('GET', `/datasets/${id}/items?limit=1000`)).body.next_cursor}`,
    );
    expect(page.body.items[0].input).toEqual({ i: 1000, s: 'é✓' });
  });
});
