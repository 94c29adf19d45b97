// The decoding layer of POST /api/v1/traces: payloads built by the real OpenTelemetry serializers
// (the code inside the -proto and -http exporters), hand-written OTLP/JSON, the flat form, id
// validation, limits, the response encoder and body inflation. No stores, no HTTP.
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import protobuf from 'protobufjs/minimal.js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { DomainError } from '../../../src/errors.ts';
import { HttpError, toHttpError } from '../../../src/http/errors.ts';
import { decodeJsonTraces } from '../../../src/ingest/otlp/decode-json.ts';
import { decodeProtobufTraces } from '../../../src/ingest/otlp/decode-protobuf.ts';
import { inflateBody } from '../../../src/ingest/otlp/inflate.ts';
import { encodeExportResponse, exportTraceServiceResponseJson } from '../../../src/ingest/otlp/response.ts';
import { DEFAULT_DECODE_LIMITS, type DecodeResult } from '../../../src/executions/span.ts';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const PARENT_ID = 'eee19b7ec3c1b173';
const LINKED = { traceId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', spanId: '0102030405060708' };
const BIG = 2 ** 60; // an int64 beyond 2^53 that a JS number holds exactly

/** Spans from a real tracer: one CLIENT child with every attribute type, an event, a link, an error status. */
function recordSpans(extra?: (tracer: ReturnType<BasicTracerProvider['getTracer']>) => void): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout', 'service.version': '1.4.2', 'host.cpus': 8 }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    spanLimits: { attributeCountLimit: 5000 },
  });
  const tracer = provider.getTracer('traceloom-test', '0.9.1');
  const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1 });
  const span = tracer.startSpan(
    'chat gpt-4o',
    {
      kind: SpanKind.CLIENT,
      startTime: [1_768_000_000, 123_456_789],
      attributes: {
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 1234,
        'gen_ai.request.temperature': 0.25,
        stream: false,
        'neg.int': -42,
        'big.int': BIG,
        'str.array': ['a', 'b'],
        'int.array': [1, 2, 3],
        'bool.array': [true, false],
        'double.array': [1.5, -0.5],
        unicode: 'héllo ✓ 🎉',
      },
      links: [{ context: { ...LINKED, traceFlags: 1 }, attributes: { 'link.kind': 'follows' } }],
    },
    parent,
  );
  span.addEvent('gen_ai.choice', { index: 0, finish_reason: 'stop' }, [1_768_000_000, 500_000_001]);
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
  span.end([1_768_000_001, 987_654_321]);
  extra?.(tracer);
  return exporter.getFinishedSpans();
}

const protoBytes = (spans: ReadableSpan[]) => ProtobufTraceSerializer.serializeRequest(spans)!;
const jsonDoc = (spans: ReadableSpan[]) =>
  JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8')) as unknown;

/** A ReadableSpan with attributes the tracer API would refuse (kvlist, bytes, nested arrays): the serializer takes them. */
const withAttributes = (span: ReadableSpan, attributes: Record<string, unknown>): ReadableSpan =>
  Object.assign(Object.create(span) as ReadableSpan, { attributes });

async function httpError(p: Promise<unknown> | (() => unknown)): Promise<HttpError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return toHttpError(err)!;
  }
  throw new Error('expected an HttpError');
}

function expectFullSpan(result: DecodeResult) {
  expect(result.rejected).toEqual([]);
  expect(result.spans).toHaveLength(1);
  const s = result.spans[0]!;
  expect(s.traceId).toBe(TRACE_ID);
  expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
  expect(s.parentSpanId).toBe(PARENT_ID);
  expect(s.name).toBe('chat gpt-4o');
  expect(s.kind).toBe(3);
  expect(s.startTimeNs).toBe(1_768_000_000_123_456_789n);
  expect(s.endTimeNs).toBe(1_768_000_001_987_654_321n);
  expect(s.statusCode).toBe(2);
  expect(s.statusMessage).toBe('rate limited');
  expect(s.attributes).toEqual({
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.usage.input_tokens': 1234,
    'gen_ai.request.temperature': 0.25,
    stream: false,
    'neg.int': -42,
    'big.int': '1152921504606846976',
    'str.array': ['a', 'b'],
    'int.array': [1, 2, 3],
    'bool.array': [true, false],
    'double.array': [1.5, -0.5],
    unicode: 'héllo ✓ 🎉',
  });
  expect(s.events).toEqual([
    { name: 'gen_ai.choice', timeNs: 1_768_000_000_500_000_001n, attributes: { index: 0, finish_reason: 'stop' } },
  ]);
  expect(s.links).toEqual([{ ...LINKED, attributes: { 'link.kind': 'follows' } }]);
  expect(s.resource).toEqual({ 'service.name': 'checkout', 'service.version': '1.4.2', 'host.cpus': 8 });
  expect(s.scopeName).toBe('traceloom-test');
  expect(s.scopeVersion).toBe('0.9.1');
  expect(s.truncated).toEqual([]);
}

describe('protobuf, from the real OpenTelemetry serializer', () => {
  it('round-trips every field: ids, times to the nanosecond, kind, status, attributes, events, links, resource, scope', () => {
    expectFullSpan(decodeProtobufTraces(protoBytes(recordSpans())));
  });

  it('decodes kvlists, bytes, nested arrays and empty values', () => {
    const [span] = recordSpans();
    const attrs = {
      obj: { role: 'user', parts: [{ type: 'text', n: 1 }], deep: { x: [[1], [2.5]] } },
      raw: new Uint8Array([0, 1, 2, 255]),
      empty: [],
      mixed: ['a', 1, true],
    };
    const s = decodeProtobufTraces(protoBytes([withAttributes(span!, attrs)])).spans[0]!;
    expect(s.attributes).toEqual({ obj: attrs.obj, raw: 'AAEC/w==', empty: [], mixed: ['a', 1, true] });
  });

  it('shares one resource object across the spans of a resource and counts indexes across scopes', () => {
    const spans = recordSpans((tracer) => {
      for (let i = 0; i < 3; i++) tracer.startSpan(`s${i}`).end();
    });
    const result = decodeProtobufTraces(protoBytes(spans));
    expect(result.spans).toHaveLength(4);
    expect(new Set(result.spans.map((s) => s.resource)).size).toBe(1);
    expect(result.spans.filter((s) => s.parentSpanId === '')).toHaveLength(3); // roots
    expect(new Set(result.spans.map((s) => s.traceId)).size).toBe(4);
  });

  it('accepts an empty request', () => {
    expect(decodeProtobufTraces(new Uint8Array(0))).toEqual({ spans: [], rejected: [] });
  });

  it('skips unknown fields of every wire type, in any order, with the scope after its spans', () => {
    const w = protobuf.Writer.create();
    const unknowns = (x: protobuf.Writer) =>
      x
        .uint32((90 << 3) | 0)
        .uint64(2 ** 40)
        .uint32((91 << 3) | 1)
        .fixed64(7)
        .uint32((92 << 3) | 2)
        .bytes(new Uint8Array([1, 2, 3]))
        .uint32((93 << 3) | 5)
        .fixed32(9);
    w.uint32(0x0a).fork(); // ResourceSpans
    w.uint32(0x12).fork(); // ScopeSpans
    w.uint32(0x12).fork(); // Span
    unknowns(w);
    w.uint32(0x2a)
      .string('late-id-span')
      .uint32((16 << 3) | 5)
      .fixed32(257); // name; flags (field 16, fixed32)
    w.uint32(0x12).bytes(Buffer.from('0102030405060708', 'hex')).uint32(0x0a).bytes(Buffer.from(TRACE_ID, 'hex'));
    w.uint32(0x1a).string('w3c=state'); // trace_state: skipped
    w.uint32(0x41).fixed64(2000).uint32(0x39).fixed64(1000).uint32(0x30).uint32(9); // unknown kind 9 → 0
    w.uint32(0x7a).fork().uint32(0x08).uint32(1).uint32(0x18).uint32(1).ldelim(); // status with reserved field 1
    w.ldelim();
    w.uint32(0x0a).fork().uint32(0x0a).string('late-scope').uint32(0x12).string('2').ldelim(); // scope after span
    unknowns(w);
    w.ldelim();
    w.uint32(0x0a)
      .fork()
      .uint32(0x0a)
      .fork()
      .uint32(0x0a)
      .string('k')
      .uint32(0x12)
      .fork()
      .uint32(0x0a)
      .string('v')
      .ldelim()
      .ldelim()
      .ldelim(); // resource after scopeSpans
    w.ldelim();
    unknowns(w);
    const { spans, rejected } = decodeProtobufTraces(w.finish());
    expect(rejected).toEqual([]);
    expect(spans[0]).toMatchObject({
      traceId: TRACE_ID,
      spanId: '0102030405060708',
      name: 'late-id-span',
      kind: 0,
      startTimeNs: 1000n,
      endTimeNs: 2000n,
      statusCode: 1,
      scopeName: 'late-scope',
      scopeVersion: '2',
      resource: { k: 'v' },
    });
  });

  it('answers 400 naming the problem for truncated bodies, bad wire types and lengths past the end', async () => {
    const valid = protoBytes(recordSpans());
    const truncated = await httpError(() => decodeProtobufTraces(valid.subarray(0, valid.length - 7)));
    expect(truncated.status).toBe(400);
    expect(truncated.detail).toMatch(/^Request body is not a valid OTLP ExportTraceServiceRequest: /);
    const badWire = await httpError(() => decodeProtobufTraces(new Uint8Array([0x0b, 0x00])));
    expect(badWire.detail).toMatch(/invalid wire type 3 for field 1/);
    const pastEnd = await httpError(() => decodeProtobufTraces(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00])));
    expect(pastEnd.detail).toMatch(/length 4294967295 .* runs past the end/);
    const nestedPastParent = await httpError(() => decodeProtobufTraces(new Uint8Array([0x0a, 0x02, 0x12, 0x05, 0, 0, 0, 0, 0])));
    expect(nestedPastParent.detail).toMatch(/runs past the end of its message \(offset 4\)/);
    expect((await httpError(() => decodeProtobufTraces(Buffer.from('{"resourceSpans":[]}')))).status).toBe(400);
  });

  it('rejects every span of an OTLP logs export posted here: they have no ids', async () => {
    const exporter = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
    const logger = provider.getLogger('app');
    for (let i = 0; i < 3; i++) logger.emit({ body: `line ${i}`, severityText: 'INFO', attributes: { n: i } });
    await provider.forceFlush();
    expect(exporter.getFinishedLogRecords()).toHaveLength(3);
    const body = ProtobufLogsSerializer.serializeRequest(exporter.getFinishedLogRecords())!;
    const { spans, rejected } = decodeProtobufTraces(body);
    expect(spans).toEqual([]);
    expect(rejected.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(rejected[0]!.reason).toBe('trace_id: must be 16 bytes (32 hex characters), not all zero; got none');

    // Log records inside a span carry trace_id as field 9, which is a span's attributes: refused or rejected, never stored.
    const tracer = new BasicTracerProvider().getTracer('t');
    tracer.startActiveSpan('outer', (span) => {
      logger.emit({ body: 'in a span' });
      span.end();
    });
    await provider.forceFlush();
    const inSpan = ProtobufLogsSerializer.serializeRequest(exporter.getFinishedLogRecords().slice(3))!;
    let outcome: DecodeResult | HttpError;
    try {
      outcome = decodeProtobufTraces(inSpan);
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      outcome = toHttpError(err)!;
    }
    if (outcome instanceof HttpError) expect(outcome.status).toBe(400);
    else expect(outcome.spans).toEqual([]);
  });
});

describe('OTLP/JSON', () => {
  it('decodes what the real JSON serializer sends exactly as the protobuf decoder does', () => {
    const [span] = recordSpans();
    const odd = withAttributes(span!, { ...span!.attributes, obj: { a: [1, { b: 'c' }] }, raw: new Uint8Array([9, 8]) });
    const fromJson = decodeJsonTraces(jsonDoc([odd]));
    expect(fromJson).toEqual(decodeProtobufTraces(protoBytes([odd])));
    expectFullSpan(decodeJsonTraces(jsonDoc(recordSpans())));
  });

  it('tolerates what other senders do: uppercase hex, enum names, string ints, NaN, snake_case, base64 ids', () => {
    const doc = {
      resource_spans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scope_spans: [
            {
              scope: { name: 'lib', version: '1' },
              spans: [
                {
                  traceId: '5B8EFFF798038103D269B633813FC60C',
                  spanId: 'EEE19B7EC3C1B174',
                  parentSpanId: 'EEE19B7EC3C1B173',
                  name: 'chat',
                  kind: 'SPAN_KIND_CLIENT',
                  startTimeUnixNano: '1544712660000000001',
                  endTimeUnixNano: 1544712661000000000,
                  attributes: [
                    { key: 'i', value: { intValue: '9223372036854775807' } },
                    { key: 'j', value: { intValue: '-12' } },
                    { key: 'nan', value: { doubleValue: 'NaN' } },
                    { key: 'inf', value: { doubleValue: '-Infinity' } },
                    { key: 'b', value: { boolValue: true } },
                    { key: 'bytes', value: { bytesValue: 'AAE=' } },
                    {
                      key: 'kv',
                      value: { kvlistValue: { values: [{ key: 'x', value: { arrayValue: { values: [{ int_value: 1 }, {}] } } }] } },
                    },
                    { key: 'unset', value: {} },
                    { key: 'bare', value: 'plain' },
                  ],
                  events: [{ timeUnixNano: '1544712660500000000', name: 'e', attributes: [] }],
                  status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
                },
                {
                  trace_id: 'W47/95gDgQPSabYzgT/GDA==',
                  span_id: '7uGbfsPBsXQ=',
                  kind: 2,
                  status: { code: 1 },
                },
              ],
            },
          ],
        },
      ],
    };
    const { spans, rejected } = decodeJsonTraces(doc);
    expect(rejected).toEqual([]);
    expect(spans[0]).toMatchObject({
      traceId: TRACE_ID,
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: PARENT_ID,
      kind: 3,
      statusCode: 2,
      statusMessage: 'boom',
      startTimeNs: 1544712660000000001n,
      scopeName: 'lib',
      resource: { 'service.name': 'svc' },
    });
    expect(spans[0]!.attributes).toEqual({
      i: '9223372036854775807',
      j: -12,
      nan: NaN,
      inf: -Infinity,
      b: true,
      bytes: 'AAE=',
      kv: { x: [1, null] },
      unset: null,
      bare: 'plain',
    });
    expect(spans[0]!.events[0]!.timeNs).toBe(1544712660500000000n);
    expect(spans[1]).toMatchObject({
      traceId: TRACE_ID,
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: '',
      kind: 2,
      statusCode: 1,
      startTimeNs: 0n,
    });
  });

  it('rejects only the broken spans, with their index and a reason', () => {
    const good = { traceId: TRACE_ID, spanId: '0000000000000001' };
    const doc = {
      resourceSpans: [
        {
          scopeSpans: [
            { spans: [good, { ...good, kind: 'SIDEWAYS' }] },
            {
              spans: [
                { ...good, startTimeUnixNano: 'yesterday' },
                'x',
                { ...good, traceId: '00000000000000000000000000000000' },
                { ...good, parentSpanId: 'abcd' },
                { ...good, spanId: 'zz' },
              ],
            },
          ],
        },
      ],
    };
    const { spans, rejected } = decodeJsonTraces(doc);
    expect(spans).toHaveLength(1);
    expect(rejected.map((r) => [r.index, r.reason.split(':')[0]])).toEqual([
      [1, 'kind'],
      [2, 'startTimeUnixNano'],
      [3, 'span'],
      [4, 'trace_id'],
      [5, 'parent_span_id'],
      [6, 'span_id'],
    ]);
    expect(rejected[3]!.reason).toBe('trace_id: must be 16 bytes (32 hex characters), not all zero; got 16 zero bytes');
    expect(rejected[0]).toMatchObject({ traceId: TRACE_ID, spanId: '0000000000000001' });
  });

  it('answers 400 for a document of neither shape, and accepts {} as an empty request', async () => {
    for (const doc of [
      null,
      [],
      'x',
      { resourceLogs: [] },
      { spans: 3 },
      { resourceSpans: {} },
      { resourceSpans: [{ scopeSpans: 'no' }] },
    ]) {
      const err = await httpError(() => decodeJsonTraces(doc));
      expect(err.status).toBe(400);
    }
    expect((await httpError(() => decodeJsonTraces({ data: 1 }))).detail).toMatch(/resourceSpans.*or the flat form/);
    expect(decodeJsonTraces({})).toEqual({ spans: [], rejected: [] });
    expect(decodeJsonTraces({ resourceSpans: [] })).toEqual({ spans: [], rejected: [] });
  });
});

describe('flat form', () => {
  const base = {
    trace_id: TRACE_ID.toUpperCase(),
    span_id: 'eee19b7ec3c1b174',
    start_time_ns: '1768000000123456789',
    end_time_ns: 1768000001000000000,
  };

  it('decodes every field, kind and status as names or integers, nested attribute values kept', () => {
    const doc = {
      resource: { 'service.name': 'flat-svc' },
      spans: [
        {
          ...base,
          parent_span_id: PARENT_ID,
          span_name: 'llm call',
          span_kind: 'CLIENT',
          status_code: 'ERROR',
          status_message: 'nope',
          attributes: { 'gen_ai.request.model': 'gpt-4o', tokens: 12, nested: { a: [1, { b: null }], ok: true } },
          events: [
            { name: 'first', time_ns: '1768000000200000000', attributes: { k: 'v' } },
            { name: 'iso', timestamp: '2026-01-10T00:00:00.000Z' },
            { name: 'ms', timestamp: 1768000000300 },
          ],
        },
        {
          ...base,
          span_id: '0000000000000002',
          parent_span_id: null,
          name: 'tool',
          span_kind: 'SPAN_KIND_INTERNAL',
          status_code: 1,
          resource: { 'service.name': 'own' },
        },
        { ...base, span_id: '0000000000000003', span_kind: 5, status_code: 'unset', parent_span_id: '' },
      ],
    };
    const { spans, rejected } = decodeJsonTraces(doc);
    expect(rejected).toEqual([]);
    expect(spans[0]).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: PARENT_ID,
      name: 'llm call',
      kind: 3,
      statusCode: 2,
      statusMessage: 'nope',
      startTimeNs: 1768000000123456789n,
      endTimeNs: 1768000001000000000n,
      resource: { 'service.name': 'flat-svc' },
    });
    expect(spans[0]!.attributes).toEqual({ 'gen_ai.request.model': 'gpt-4o', tokens: 12, nested: { a: [1, { b: null }], ok: true } });
    expect(spans[0]!.events.map((e) => e.timeNs)).toEqual([1768000000200000000n, 1768003200000000000n, 1768000000300000000n]);
    expect(spans[1]).toMatchObject({ name: 'tool', kind: 1, statusCode: 1, parentSpanId: '', resource: { 'service.name': 'own' } });
    expect(spans[2]).toMatchObject({ kind: 5, statusCode: 0, parentSpanId: '' });
    expect(spans[0]!.resource).toBe(spans[2]!.resource);
  });

  it('rejects spans without usable ids or with bad values, keeps the rest', () => {
    const { spans, rejected } = decodeJsonTraces({
      spans: [base, { span_name: 'no ids' }, { ...base, span_kind: 'WEIRD' }, { ...base, end_time_ns: -5 }, { ...base, status_code: 7 }],
    });
    expect(spans).toHaveLength(1);
    expect(rejected.map((r) => r.reason)).toEqual([
      'trace_id: must be 16 bytes (32 hex characters), not all zero; got none',
      'span_kind: must be 0-5 or a SpanKind name such as CLIENT; got "WEIRD"',
      'end_time_ns: must be an integer number of nanoseconds since the epoch (a string or a number); got -5',
      'status_code: must be 0-2 or UNSET, OK, ERROR; got 7',
    ]);
  });
});

describe('limits', () => {
  const limits = { maxAttributes: 4, maxValueChars: 10, maxDepth: 2, maxEvents: 2 };
  const attrs = { a: 'x'.repeat(25), b: [[['too deep']]], c: { d: { e: { f: 1 } } }, d: 1, e: 2, f: 3 };

  it('drops attributes and events beyond the caps, cuts long strings and deep nesting, and says so (protobuf)', () => {
    const [span] = recordSpans();
    const many = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k${i}`, i]));
    const big = decodeProtobufTraces(protoBytes([withAttributes(span!, many)]));
    expect(Object.keys(big.spans[0]!.attributes)).toHaveLength(1024);
    expect(big.spans[0]!.truncated).toEqual(['attributes: 1500 sent, 1024 kept']);

    const ev = { name: 'e', time: [1, 0], attributes: {}, droppedAttributesCount: 0 };
    const s = decodeProtobufTraces(protoBytes([Object.assign(withAttributes(span!, attrs), { events: [ev, ev, ev] })]), limits).spans[0]!;
    expect(s.attributes).toEqual({ a: 'x'.repeat(10), b: [[null]], c: { d: { e: null } }, d: 1 });
    expect(s.events).toHaveLength(2);
    expect(s.truncated).toEqual([
      'name: value of 11 characters cut to 10',
      'attributes.a: value of 25 characters cut to 10',
      'attributes.b: nesting deeper than 2 levels cut',
      'attributes.c: nesting deeper than 2 levels cut',
      'status.message: value of 12 characters cut to 10',
      'attributes: 6 sent, 4 kept',
      'events: 3 sent, 2 kept',
    ]);
  });

  it('caps resource attributes too, noting it on each span of the resource', () => {
    const few = { ...limits, maxAttributes: 2 };
    const fromProto = decodeProtobufTraces(protoBytes(recordSpans()), few).spans[0]!;
    expect(Object.keys(fromProto.resource)).toEqual(['service.name', 'service.version']);
    expect(fromProto.truncated.at(-1)).toBe('resource.attributes: 3 sent, 2 kept');
    const fromJson = decodeJsonTraces(jsonDoc(recordSpans()), few).spans[0]!;
    expect([fromJson.resource, fromJson.truncated.at(-1)]).toEqual([fromProto.resource, 'resource.attributes: 3 sent, 2 kept']);
  });

  it('applies the same caps to the flat form and OTLP/JSON', () => {
    const flat = decodeJsonTraces({ spans: [{ trace_id: TRACE_ID, span_id: PARENT_ID, attributes: attrs, events: [{}, {}, {}] }] }, limits)
      .spans[0]!;
    expect(flat.attributes).toEqual({ a: 'x'.repeat(10), b: [[null]], c: { d: { e: null } }, d: 1 });
    expect(flat.truncated).toContain('attributes: 6 sent, 4 kept');
    expect(flat.truncated).toContain('events: 3 sent, 2 kept');
    const [span] = recordSpans();
    const otlp = decodeJsonTraces(jsonDoc([withAttributes(span!, attrs)]), limits).spans[0]!;
    expect(otlp.attributes).toEqual(flat.attributes);
    expect(DEFAULT_DECODE_LIMITS.maxAttributes).toBe(1024);
  });

  it('keeps a 1 MB message attribute whole under the default limits, and never splits a surrogate pair', () => {
    const [span] = recordSpans();
    const msg = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'é'.repeat(500_000) }] }]);
    expect(decodeProtobufTraces(protoBytes([withAttributes(span!, { 'gen_ai.input.messages': msg })]))).toMatchObject({
      spans: [{ attributes: { 'gen_ai.input.messages': msg }, truncated: [] }],
    });
    const s = decodeProtobufTraces(protoBytes([withAttributes(span!, { e: 'abcdefghi🎉' })]), limits).spans[0]!;
    expect(s.attributes.e).toBe('abcdefghi');
  });
});

describe('ExportTraceServiceResponse', () => {
  it("is empty on full success and carries partial_success otherwise (checked with the exporter's own parser)", () => {
    expect(encodeExportResponse(0, '')).toHaveLength(0);
    expect(ProtobufTraceSerializer.deserializeResponse(encodeExportResponse(3, 'span 2: trace_id'))).toEqual({
      partialSuccess: { rejectedSpans: 3, errorMessage: 'span 2: trace_id' },
    });
    expect(ProtobufTraceSerializer.deserializeResponse(encodeExportResponse(0, 'warning'))).toMatchObject({
      partialSuccess: { errorMessage: 'warning' },
    });
    expect(exportTraceServiceResponseJson(0, '')).toEqual({});
    expect(exportTraceServiceResponseJson(2, 'x')).toEqual({ partialSuccess: { rejectedSpans: '2', errorMessage: 'x' } });
  });
});

describe('inflateBody', () => {
  const MiB = 1024 * 1024;
  const body = Buffer.from(JSON.stringify({ resourceSpans: [], pad: 'p'.repeat(200_000) }));

  it('inflates gzip, x-gzip, zlib deflate, raw deflate and mislabelled gzip; passes identity through', async () => {
    for (const [enc, data] of [
      ['gzip', zlib.gzipSync(body)],
      ['x-gzip', zlib.gzipSync(body)],
      ['deflate', zlib.deflateSync(body)],
      ['deflate', zlib.deflateRawSync(body)],
      ['deflate', zlib.gzipSync(body)],
      [' GZIP ', zlib.gzipSync(body)],
      ['identity, gzip', zlib.gzipSync(body)],
    ] as const) {
      expect((await inflateBody(data, enc, MiB)).equals(body)).toBe(true);
    }
    expect(await inflateBody(body, undefined, MiB)).toBe(body);
    expect(await inflateBody(body, 'identity', MiB)).toBe(body);
  });

  it('refuses a 1 GiB gzip bomb with 413 as soon as the limit is passed', async () => {
    const member = zlib.gzipSync(Buffer.alloc(16 * MiB), { level: 9 }); // ~16 KiB; 64 members inflate to 1 GiB
    const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
    const rssBefore = process.memoryUsage().rss;
    const t0 = performance.now();
    const err = await httpError(inflateBody(bomb, 'gzip', 8 * MiB));
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(err.status).toBe(413);
    expect(err.detail).toBe(`Request body exceeds the limit of ${8 * MiB} bytes once inflated`);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * MiB);
    expect((await httpError(inflateBody(zlib.deflateSync(Buffer.alloc(2 * MiB)), 'deflate', MiB))).status).toBe(413);
    expect((await httpError(inflateBody(Buffer.alloc(2 * MiB), 'identity', MiB))).status).toBe(413);
  });

  it('answers 400 for corrupt or truncated data and 415 for unknown encodings', async () => {
    const gz = zlib.gzipSync(body);
    const corrupt = Buffer.from(gz);
    corrupt.writeUInt16LE(corrupt.readUInt16LE(20) ^ 0xffff, 20);
    const e1 = await httpError(inflateBody(corrupt, 'gzip', MiB));
    expect([e1.status, e1.detail.startsWith('Request body is not valid gzip: ')]).toEqual([400, true]);
    expect((await httpError(inflateBody(gz.subarray(0, gz.length / 2), 'gzip', MiB))).detail).toMatch(
      /^Request body is not valid gzip: unexpected end of file/,
    );
    expect((await httpError(inflateBody(Buffer.from('not compressed'), 'gzip', MiB))).status).toBe(400);
    expect((await httpError(inflateBody(Buffer.from('not compressed'), 'deflate', MiB))).detail).toMatch(
      /^Request body is not valid deflate: /,
    );
    for (const enc of ['br', 'zstd', 'gzip, br']) {
      const err = await httpError(inflateBody(gz, enc, MiB));
      expect(err.status).toBe(415);
      expect(err.detail).toMatch(/Content-Encoding "(br|zstd)" is not supported/);
    }
  });
});
