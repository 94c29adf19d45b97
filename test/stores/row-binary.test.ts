// Every insert is RowBinary encoded from the table's column list: values of every type our
// tables use go in through the real engine and come back as they were sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { ByteSink, encoderFor, rowEncoder, type ColumnDef } from '../../src/stores/row-binary.ts';
import { ASSEMBLY_COLUMNS as SPAN_COLUMNS } from '../../src/executions/span-repository.ts';
import { STORED_SPAN_COLUMNS } from '../../src/executions/span-rows.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`RowBinary inserts (${mode} mode)`, () => {
  it('every column type round-trips through the engine, edge values included', async () => {
    const ch = svc.stores.clickhouse;
    await ch.command(`CREATE TABLE IF NOT EXISTS rb_types (
      id UInt32, s String, lc LowCardinality(String), u8 UInt8, u16 UInt16, u64 UInt64, i8 Int8, i32 Int32, i64 Int64,
      d Date, t3 DateTime64(3, 'UTC'), t9 DateTime64(9, 'UTC'), dec Decimal(18, 9), dec38 Decimal(38, 9), n Nullable(Decimal(18, 9)),
      a Array(String), au Array(UInt32), ai Array(Int32), m Map(String, String), f64 Float64, f32 Float32, mat UInt64 MATERIALIZED u64 + 1
    ) ENGINE = MergeTree ORDER BY id`);
    const rows = [
      {
        id: 1,
        s: 'plain',
        lc: 'x',
        u8: 255,
        u16: 65535,
        u64: '18446744073709551615',
        i8: -128,
        i32: -2147483648,
        i64: '-9223372036854775808',
        d: '2026-11-23',
        t3: '2026-11-23 07:00:00.123',
        t9: 1_768_000_148_001_000_123n,
        dec: '999999999.999999999',
        dec38: '-12345678901234567890.123456789',
        n: null,
        a: ['é€😀', ''],
        au: [0, 4294967295],
        ai: [-1, 7],
        m: { k: 'v', ünï: 'cödé' },
        f64: -0.1,
        f32: 1.5,
      },
      {
        id: 2,
        s: 'x'.repeat(70_000),
        lc: '',
        u8: 0,
        u16: 0,
        u64: 2 ** 53 - 1,
        i8: 127,
        i32: 2147483647,
        i64: -(2 ** 40),
        d: '1970-01-01',
        t3: 0,
        t9: 0n,
        dec: '0.000000001',
        dec38: '0',
        n: '0.5',
        a: [],
        au: [],
        ai: [],
        m: {},
        f64: 1e300,
        f32: -2,
      },
      { id: 3 }, // every column missing: its type's default
    ];
    await ch.insert('rb_types', rows);
    const back = await ch.query<Record<string, unknown>>(
      'SELECT id, length(s) AS s_len, lc, u8, u16, toString(u64) AS u64, i8, i32, toString(i64) AS i64, toString(d) AS d, toString(t3) AS t3, toString(t9) AS t9, toString(dec) AS dec, toString(dec38) AS dec38, toString(n) AS n, a, au, ai, m, f64, f32, toString(mat) AS mat FROM rb_types ORDER BY id',
    );
    expect(back[0]).toEqual({
      id: 1,
      s_len: '5',
      lc: 'x',
      u8: 255,
      u16: 65535,
      u64: '18446744073709551615',
      i8: -128,
      i32: -2147483648,
      i64: '-9223372036854775808',
      d: '2026-11-23',
      t3: '2026-11-23 07:00:00.123',
      t9: '2026-01-09 23:09:08.001000123',
      dec: '999999999.999999999',
      dec38: '-12345678901234567890.123456789',
      n: null,
      a: ['é€😀', ''],
      au: [0, 4294967295],
      ai: [-1, 7],
      m: { k: 'v', ünï: 'cödé' },
      f64: -0.1,
      f32: 1.5,
      mat: '0',
    });
    expect(back[1]).toMatchObject({
      s_len: '70000',
      u64: String(2 ** 53 - 1),
      i64: String(-(2 ** 40)),
      d: '1970-01-01',
      t3: '1970-01-01 00:00:00.000',
      dec: '0.000000001',
      n: '0.5',
      a: [],
      m: {},
      f64: 1e300,
      f32: -2,
      mat: String(2 ** 53),
    });
    expect(back[2]).toMatchObject({ s_len: '0', u64: '0', i64: '0', n: null, a: [], m: {} });
  });

  it('spans encoded before a migration appended columns (an ingest log replayed after an upgrade) load with the columns they hold', async () => {
    const ch = svc.stores.clickhouse;
    const defs = await ch.query<ColumnDef>(
      "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'spans' AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL') ORDER BY position",
    );
    const before004 = defs.findIndex((d) => d.name === 'user_id');
    expect(before004).toBeGreaterThan(0);
    const legacy = rowEncoder(defs.slice(0, before004)); // what the encoder of the 002 schema wrote
    const row = (spanId: string) => ({
      project_id: 'default',
      trace_id: 'e'.repeat(32),
      span_id: spanId,
      name: 'legacy',
      start_time_ns: '1700000000000000000',
      end_time_ns: '1700000001000000000',
      received_at: '2026-11-23 07:00:00.000',
      span_class: 'other',
    });
    const sink = new ByteSink(1024);
    legacy.encode(sink, row('00000000000000a1'));
    // A record of the ingest log without a column count (written by the version before this one).
    await svc.domain.traces.log.append({ p: 'default', n: 1, t: ['e'.repeat(32)] }, Buffer.from(sink.view()));
    const current = await ch.encoderOf('spans');
    const sink2 = new ByteSink(1024);
    current.encode(sink2, { ...row('00000000000000a2'), user_id: 'u-now', tags: ['t'], metadata: { k: 'v' } });
    await svc.domain.traces.log.append({ p: 'default', n: 1, t: ['e'.repeat(32)], c: current.columns.length }, Buffer.from(sink2.view()));
    await svc.domain.traces.loader.flush();
    const back = await ch.query<{ span_id: string; name: string; user_id: string; tags: string[]; metadata: Record<string, string> }>(
      "SELECT span_id, name, user_id, tags, metadata FROM spans WHERE project_id = 'default' AND trace_id = {t:String} ORDER BY span_id",
      { t: 'e'.repeat(32) },
    );
    expect(back).toEqual([
      { span_id: '00000000000000a1', name: 'legacy', user_id: '', tags: [], metadata: {} },
      { span_id: '00000000000000a2', name: 'legacy', user_id: 'u-now', tags: ['t'], metadata: { k: 'v' } },
    ]);
  });

  it('spans decoded from their RowBinary payload read exactly as the same spans read back from the table', async () => {
    // Assembly from the ingest log decodes the records' payloads; the read-back path queries the
    // table. Both must see the same values, or the two paths would hash one trace differently.
    const ch = svc.stores.clickhouse;
    const trace = 'f'.repeat(30) + '01';
    const base = {
      project_id: 'rb-decode',
      trace_id: trace,
      received_at: '2026-11-23 07:00:00.120',
      kind: 'CLIENT',
      status_code: 'OK',
      span_class: 'inference',
    };
    const rows = [
      {
        ...base,
        span_id: 'a'.repeat(16),
        parent_span_id: '',
        start_time_ns: '1768000148001000123',
        end_time_ns: '18446744073709551615',
        name: 'chat é€',
        provider: 'openai',
        model: 'gpt-4o',
        has_usage: 1,
        tokens_in: 2 ** 53 - 1,
        tokens_out: '18446744073709551615',
        cost_provided: '0.012300000',
        tags: ['a', 'ü'],
        metadata: { k: 'v' },
        messages: '{"input":[{"role":"user","content":"hi"}]}',
        attributes: '{"x":1}',
        user_id: 'u1',
      },
      {
        ...base,
        span_id: 'b'.repeat(16),
        parent_span_id: 'a'.repeat(16),
        start_time_ns: '0',
        end_time_ns: '1',
        name: '',
        span_class: 'tool',
        status_code: 'ERROR',
        error_message: 'boom',
        cost_provided: null,
        tool_name: 't',
        tool_call_id: 'c1',
      },
      {
        ...base,
        span_id: 'c'.repeat(16),
        cost_provided: '999999999.999999999',
        received_at: '1970-01-01 00:00:00.000',
        prompt_usages: '[{"promptId":"p"}]',
      },
    ];
    const encoder = await ch.encoderOf('spans');
    const sink = new ByteSink();
    for (const r of rows) encoder.encode(sink, r);
    const payload = Buffer.from(sink.view());
    const decoded = (await ch.decoderOf('spans', STORED_SPAN_COLUMNS)).decode(payload);
    await ch.insertRowBinary('spans', [payload]);
    const back = await ch.query<Record<string, unknown>>(
      `SELECT ${SPAN_COLUMNS.replace("if(span_class IN ('inference', 'tool'), messages, '') AS messages", 'messages')} FROM spans WHERE project_id = 'rb-decode' ORDER BY span_id`,
    );
    expect(back).toHaveLength(3);
    expect(decoded).toEqual(back);
    expect(Object.keys(decoded[0]!).sort()).toEqual([...STORED_SPAN_COLUMNS].sort());
    // A payload encoded before a column assembly reads existed says so, rather than decoding without it.
    const before004 = encoder.columns.indexOf('user_id');
    expect((await ch.decoderOf('spans', STORED_SPAN_COLUMNS, before004)).missing).toEqual([
      'user_id',
      'tags',
      'metadata',
      'api_key_id',
      'environment',
      'usage_details',
      'pricing_context',
    ]);
    const before007 = encoder.columns.indexOf('api_key_id');
    expect((await ch.decoderOf('spans', STORED_SPAN_COLUMNS, before007)).missing).toEqual([
      'api_key_id',
      'environment',
      'usage_details',
      'pricing_context',
    ]);
    const before016 = encoder.columns.indexOf('environment');
    expect((await ch.decoderOf('spans', STORED_SPAN_COLUMNS, before016)).missing).toEqual([
      'environment',
      'usage_details',
      'pricing_context',
    ]);
    const before028 = encoder.columns.indexOf('usage_details');
    expect((await ch.decoderOf('spans', STORED_SPAN_COLUMNS, before028)).missing).toEqual(['usage_details', 'pricing_context']);
  });

  it('a query read as RowBinary gives the rows the JSON read gives; columns it would give otherwise are refused', async () => {
    const ch = svc.stores.clickhouse;
    const sql =
      'SELECT id, s, lc, u8, u16, u64, i8, i32, i64, toString(d) AS d, t3, toString(t9) AS t9, toString(dec) AS dec, a, au, ai, m, f64, f32, mat FROM rb_types ORDER BY id';
    const json = await ch.query<Record<string, unknown>>(sql);
    expect(json).toHaveLength(3);
    expect(await ch.queryBinary<Record<string, unknown>>(sql)).toEqual(json);
    // With bound parameters, and no row at all.
    const some = 'SELECT id, a FROM rb_types WHERE id IN {ids:Array(UInt32)} ORDER BY id';
    expect(await ch.queryBinary(some, { ids: [2, 3] })).toEqual(await ch.query(some, { ids: [2, 3] }));
    expect(await ch.queryBinary(some, { ids: [] })).toEqual([]);
    for (const column of ['d', 't9', 'dec', 'n'])
      await expect(ch.queryBinary(`SELECT ${column} FROM rb_types`)).rejects.toThrow(new RegExp(`column ${column} is a .*toString`));
  });

  it('an encoder is refused at start for a type it does not know, never on a row', () => {
    expect(() => encoderFor('Tuple(String, UInt8)')).toThrow(/not supported/);
    expect(() => encoderFor('Decimal(76, 2)')).toThrow(/not supported/);
    const sink = new ByteSink(1);
    encoderFor('String')(sink, 'grows past its first size');
    expect(sink.view().length).toBe(26);
  });

  it('a value the encoder cannot store is refused data (422 for a direct record), not a store that is down', async () => {
    await expect(svc.stores.clickhouse.insert('rb_types', [{ id: 9, dec: 'not a number' }])).rejects.toMatchObject({
      clickhouseCode: '27',
    });
  });
});
