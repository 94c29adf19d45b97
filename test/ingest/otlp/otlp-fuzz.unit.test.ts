// Hostile and broken trace bodies: every input must either decode into well-formed spans or be
// refused with a 4xx domain error; never another exception, never a hang. Seeded, so reproducible:
// a failure prints the case number and its seed reproduces it.
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import protobuf from 'protobufjs/minimal.js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DomainError } from '../../../src/errors.ts';
import { toHttpError } from '../../../src/http/errors.ts';

/** The HTTP answer to a domain error (src/http/errors.ts); undefined for anything else. */
const httpOf = (err: unknown) => (err instanceof DomainError ? toHttpError(err) : undefined);
import { decodeJsonTraces } from '../../../src/ingest/otlp/decode-json.ts';
import { decodeProtobufTraces } from '../../../src/ingest/otlp/decode-protobuf.ts';
import { inflateBody } from '../../../src/ingest/otlp/inflate.ts';
import type { DecodeResult } from '../../../src/executions/span.ts';

const SEED = 0x7e57_5eed;

/** mulberry32: small, fast, good enough to spread cases. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!,
    bytes: (n: number) => Uint8Array.from({ length: n }, () => int(256)),
  };
}

function sampleSpans(): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'fuzz' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('fuzz-scope', '1');
  for (let i = 0; i < 4; i++) {
    const span = tracer.startSpan(`span ${i}`, {
      kind: SpanKind.CLIENT,
      attributes: { s: 'x'.repeat(i * 10), n: i, d: 0.5, b: true, a: ['p', 'q'], big: 2 ** 62 },
    });
    span.addEvent('evt', { k: i });
    span.setStatus({ code: i % 2 ? SpanStatusCode.ERROR : SpanStatusCode.OK, message: 'm' });
    span.end();
  }
  const [first, ...rest] = exporter.getFinishedSpans();
  const nested = Object.assign(Object.create(first!) as ReadableSpan, {
    attributes: { kv: { a: [1, { b: 'c' }], raw: new Uint8Array([1, 2]) } },
  });
  return [nested, ...rest];
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/** What every successful decode must satisfy, so that a fuzz pass is not vacuous. */
function checkResult(r: DecodeResult): void {
  for (const s of r.spans) {
    if (!HEX32.test(s.traceId) || /^0+$/.test(s.traceId)) throw new Error(`bad traceId ${s.traceId}`);
    if (!HEX16.test(s.spanId) || /^0+$/.test(s.spanId)) throw new Error(`bad spanId ${s.spanId}`);
    if (s.parentSpanId !== '' && !HEX16.test(s.parentSpanId)) throw new Error(`bad parent ${s.parentSpanId}`);
    if (!(s.kind >= 0 && s.kind <= 5 && s.statusCode >= 0 && s.statusCode <= 2)) throw new Error('enum out of range');
    if (typeof s.startTimeNs !== 'bigint' || typeof s.endTimeNs !== 'bigint') throw new Error('times not bigint');
    if (typeof s.name !== 'string' || !Array.isArray(s.events) || !Array.isArray(s.truncated) || typeof s.attributes !== 'object')
      throw new Error('shape');
  }
  for (const x of r.rejected)
    if (!Number.isInteger(x.index) || typeof x.reason !== 'string' || x.reason === '') throw new Error('bad rejection');
}

type Outcome = 'decoded' | 'refused';

/** Runs one case; anything but a decode or a 4xx domain error fails the test, naming the case. */
function outcome(label: string, run: () => DecodeResult): Outcome {
  let result: DecodeResult;
  try {
    result = run();
  } catch (err) {
    const h = httpOf(err);
    if (h && h.status >= 400 && h.status < 500 && h.detail.length > 0) return 'refused';
    throw new Error(`${label}: threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  }
  try {
    checkResult(result);
  } catch (err) {
    throw new Error(`${label}: ${(err as Error).message}`);
  }
  return 'decoded';
}

function tally(outcomes: Outcome[]) {
  return { decoded: outcomes.filter((o) => o === 'decoded').length, refused: outcomes.filter((o) => o === 'refused').length };
}

const valid = ProtobufTraceSerializer.serializeRequest(sampleSpans())!;
const validJson = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(sampleSpans())!).toString()) as unknown;

describe('protobuf fuzz', () => {
  it('the seed payload is valid', () => {
    expect(decodeProtobufTraces(valid).spans).toHaveLength(4);
  });

  it('1,500 random byte strings', () => {
    const rnd = prng(SEED);
    const outs: Outcome[] = [];
    for (let i = 0; i < 1500; i++) {
      const body = rnd.bytes(rnd.int(300));
      if (i % 2 === 0 && body.length > 0) body[0] = 0x0a; // half of them start like a ResourceSpans
      outs.push(outcome(`random #${i}`, () => decodeProtobufTraces(body)));
    }
    expect(tally(outs).refused).toBeGreaterThan(1000);
  });

  it('every truncation of a valid request', () => {
    const outs: Outcome[] = [];
    for (let n = 0; n < valid.length; n++) outs.push(outcome(`truncated at ${n}`, () => decodeProtobufTraces(valid.subarray(0, n))));
    const { decoded, refused } = tally(outs);
    expect(refused).toBeGreaterThan(valid.length * 0.9); // cutting inside a message is almost always detectable
    expect(decoded).toBeGreaterThan(0); // n = 0 at least
  });

  it('2,000 bit flips, byte overwrites, insertions and deletions of a valid request', () => {
    const rnd = prng(SEED + 1);
    const outs: Outcome[] = [];
    for (let i = 0; i < 2000; i++) {
      let body = Uint8Array.from(valid);
      const edits = 1 + rnd.int(4);
      for (let e = 0; e < edits; e++) {
        const at = rnd.int(body.length);
        const op = rnd.int(4);
        if (op === 0) body[at] = body[at]! ^ (1 << rnd.int(8));
        else if (op === 1) body[at] = rnd.pick([0x00, 0x7f, 0x80, 0xff, 0x0a, 0x0b, 0x0c, 0x0f]);
        else if (op === 2) body = Uint8Array.from([...body.subarray(0, at), rnd.int(256), ...body.subarray(at)]);
        else body = Uint8Array.from([...body.subarray(0, at), ...body.subarray(at + 1)]);
      }
      outs.push(outcome(`mutation #${i}`, () => decodeProtobufTraces(body)));
    }
    const { decoded, refused } = tally(outs);
    expect(decoded).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('500 well-formed messages of random fields at random depths', () => {
    const rnd = prng(SEED + 2);
    const write = (w: protobuf.Writer, depth: number): void => {
      const fields = rnd.int(6);
      for (let f = 0; f < fields; f++) {
        const field = rnd.pick([1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16, 17]);
        const wire = rnd.pick([0, 1, 2, 2, 2, 5]);
        w.uint32((field << 3) | wire);
        if (wire === 0) w.uint64(rnd.pick([0, 1, 3, 2 ** 31, 2 ** 53, -1]));
        else if (wire === 1) w.fixed64(rnd.int(2 ** 31));
        else if (wire === 5) w.fixed32(rnd.int(2 ** 31));
        else if (depth < 8 && rnd.next() < 0.6) {
          w.fork();
          write(w, depth + 1);
          w.ldelim();
        } else w.bytes(rnd.bytes(rnd.pick([0, 8, 16, 5])));
      }
    };
    const outs: Outcome[] = [];
    for (let i = 0; i < 500; i++) {
      const w = protobuf.Writer.create();
      write(w, 0);
      const body = w.finish();
      outs.push(outcome(`structured #${i}`, () => decodeProtobufTraces(body)));
    }
    expect(tally(outs).decoded).toBeGreaterThan(50);
  });

  it('huge declared lengths, overlong varints and groups at every level are refused before any allocation', () => {
    const prefixes = [[], [0x0a, 0x80, 0x80, 0x04], [0x0a, 0x80, 0x80, 0x04, 0x12, 0x80, 0x80, 0x04]];
    const tails = [
      [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f],
      [0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
      [0x12, 0xfe, 0xff, 0xff, 0xff, 0x07],
      [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
      [0x0b, 0x0c],
      [0x0e],
      [0x00],
    ];
    for (const p of prefixes) {
      for (const t of tails) {
        const body = Buffer.from([...p, ...t, ...new Array(64).fill(0)]);
        const err = (() => {
          try {
            decodeProtobufTraces(body);
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        expect(err, `prefix ${p} tail ${t}`).toBeInstanceOf(DomainError);
        expect(httpOf(err)!.status).toBe(400);
      }
    }
  });

  it('100,000 levels of nested arrays: cut at maxDepth, no stack overflow; with no depth cap, a 400', () => {
    const levels = 100_000;
    const w = protobuf.Writer.create();
    w.uint32(0x0a).fork().uint32(0x12).fork().uint32(0x12).fork(); // ResourceSpans > ScopeSpans > Span
    w.uint32(0x0a).bytes(Buffer.alloc(16, 1)).uint32(0x12).bytes(Buffer.alloc(8, 2));
    w.uint32(0x4a).fork().uint32(0x0a).string('deep').uint32(0x12).fork(); // attribute "deep": AnyValue
    for (let i = 0; i < levels; i++) w.uint32(0x2a).fork().uint32(0x0a).fork(); // array_value { values: AnyValue
    w.uint32(0x0a).string('bottom');
    for (let i = 0; i < levels; i++) w.ldelim().ldelim();
    w.ldelim().ldelim().ldelim().ldelim().ldelim();
    const body = w.finish();
    const s = decodeProtobufTraces(body).spans[0]!;
    expect(s.truncated).toEqual(['attributes.deep: nesting deeper than 16 levels cut']);
    let depth = 0;
    for (let v: unknown = s.attributes.deep; Array.isArray(v); v = v[0]) depth++;
    expect(depth).toBe(16);
    const err = (() => {
      try {
        decodeProtobufTraces(body, { maxAttributes: 10, maxValueChars: 10, maxEvents: 10, maxDepth: 1e9 });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(DomainError); // the stack overflows: a 400, not a crash
    expect(httpOf(err)!.status).toBe(400);
    expect((err as DomainError).detail).toMatch(/nested too deeply/);
  });
});

describe('JSON fuzz', () => {
  const KEYS = [
    'resourceSpans',
    'resource_spans',
    'scopeSpans',
    'spans',
    'resource',
    'attributes',
    'scope',
    'traceId',
    'trace_id',
    'spanId',
    'span_id',
    'parentSpanId',
    'name',
    'span_name',
    'kind',
    'span_kind',
    'startTimeUnixNano',
    'start_time_ns',
    'endTimeUnixNano',
    'status',
    'status_code',
    'code',
    'message',
    'events',
    'links',
    'timeUnixNano',
    'time_ns',
    'timestamp',
    'key',
    'value',
    'values',
    'stringValue',
    'intValue',
    'doubleValue',
    'boolValue',
    'arrayValue',
    'kvlistValue',
    'bytesValue',
    '__proto__',
    'constructor',
  ];
  const SCALARS: unknown[] = [
    null,
    true,
    false,
    0,
    -1,
    3,
    1.5,
    2 ** 64,
    -(2 ** 70),
    1e308,
    '',
    'x',
    'NaN',
    'Infinity',
    '-Infinity',
    '12',
    '-9223372036854775809',
    '99999999999999999999999',
    'CLIENT',
    'SPAN_KIND_SERVER',
    'STATUS_CODE_ERROR',
    '5b8efff798038103d269b633813fc60c',
    'EEE19B7EC3C1B174',
    'W47/95gDgQPSabYzgT/GDA==',
    '0000000000000000',
    '2026-01-01T00:00:00Z',
  ];

  function randomValue(rnd: ReturnType<typeof prng>, depth: number): unknown {
    const r = rnd.next();
    if (depth > 6 || r < 0.4) return rnd.pick(SCALARS);
    if (r < 0.65) return Array.from({ length: rnd.int(4) }, () => randomValue(rnd, depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = rnd.int(5); i > 0; i--)
      Object.defineProperty(o, rnd.pick(KEYS), {
        value: randomValue(rnd, depth + 1),
        enumerable: true,
        configurable: true,
        writable: true,
      });
    return o;
  }

  function mutate(rnd: ReturnType<typeof prng>, doc: unknown): unknown {
    const copy = JSON.parse(JSON.stringify(doc)) as unknown;
    const nodes: Array<[Record<string, unknown> | unknown[], string | number]> = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v))
        v.forEach((x, i) => {
          nodes.push([v, i]);
          walk(x);
        });
      else if (v && typeof v === 'object')
        for (const k of Object.keys(v)) {
          nodes.push([v as Record<string, unknown>, k]);
          walk((v as Record<string, unknown>)[k]);
        }
    };
    walk(copy);
    for (let i = 1 + rnd.int(3); i > 0; i--) {
      const [parent, key] = rnd.pick(nodes);
      (parent as Record<string | number, unknown>)[key] = randomValue(rnd, 4);
    }
    return copy;
  }

  it('the seed document is valid', () => {
    expect(decodeJsonTraces(validJson).spans).toHaveLength(4);
  });

  it('1,500 random documents and 1,500 mutations of a valid one', () => {
    const rnd = prng(SEED + 3);
    const outs: Outcome[] = [];
    for (let i = 0; i < 1500; i++) {
      const doc = i % 3 === 0 ? { resourceSpans: randomValue(rnd, 1) } : i % 3 === 1 ? { spans: randomValue(rnd, 1) } : randomValue(rnd, 0);
      outs.push(outcome(`random json #${i}`, () => decodeJsonTraces(doc)));
    }
    for (let i = 0; i < 1500; i++) {
      const doc = mutate(rnd, validJson);
      outs.push(outcome(`mutated json #${i}`, () => decodeJsonTraces(doc)));
    }
    const { decoded, refused } = tally(outs);
    expect(decoded).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(100);
  });

  it('100,000 levels of nesting in flat attributes and in kvlistValue are cut at maxDepth', () => {
    let plain: unknown = 'bottom';
    let any: unknown = { stringValue: 'bottom' };
    for (let i = 0; i < 100_000; i++) {
      plain = { a: [plain] };
      any = { kvlistValue: { values: [{ key: 'a', value: any }] } };
    }
    const ids = { trace_id: '5b8efff798038103d269b633813fc60c', span_id: 'eee19b7ec3c1b174' };
    const flat = decodeJsonTraces({ spans: [{ ...ids, attributes: { deep: plain } }] }).spans[0]!;
    expect(flat.truncated).toEqual(['attributes.deep: nesting deeper than 16 levels cut']);
    const otlp = decodeJsonTraces({
      resourceSpans: [
        { scopeSpans: [{ spans: [{ traceId: ids.trace_id, spanId: ids.span_id, attributes: [{ key: 'deep', value: any }] }] }] },
      ],
    }).spans[0]!;
    expect(otlp.truncated).toEqual(['attributes.deep: nesting deeper than 16 levels cut']);
  });
});

describe('inflate fuzz', () => {
  it('300 corrupted gzip and deflate bodies: inflated and decoded, or a 4xx', async () => {
    const rnd = prng(SEED + 4);
    const gz = zlib.gzipSync(valid);
    const df = zlib.deflateSync(valid);
    const outs: Outcome[] = [];
    for (let i = 0; i < 300; i++) {
      const [enc, src] = i % 2 ? (['gzip', gz] as const) : (['deflate', df] as const);
      const body = Buffer.from(src);
      for (let e = 1 + rnd.int(3); e > 0; e--) {
        const at = rnd.int(body.length);
        body[at] = body[at]! ^ (1 << rnd.int(8));
      }
      const cut = rnd.next() < 0.3 ? body.subarray(0, rnd.int(body.length)) : body;
      try {
        const inflated = await inflateBody(cut, enc, 1 << 20);
        outs.push(outcome(`inflate #${i}`, () => decodeProtobufTraces(inflated)));
      } catch (err) {
        const h = httpOf(err);
        if (!(h && h.status >= 400 && h.status < 500)) throw new Error(`inflate #${i}: threw ${String(err)}`);
        outs.push('refused');
      }
    }
    expect(tally(outs).refused).toBeGreaterThan(100);
  });
});
