// The values of the request fuzzer (request-fuzz.ts): hostile text and numbers, URL escapes,
// near-valid values from a JSON Schema, OTLP-shaped bodies, and JSON text that can carry what
// JSON.stringify cannot write (1e400).
import fc from 'fast-check';
import type { JsonSchema } from '../../src/http/validation.ts';

/** JSON text inserted as is (numbers JSON.stringify cannot write: 1e400, -0, 99999999999999999999). */
export class RawJson {
  constructor(readonly text: string) {}
}

export function toJsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJsonText(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const HOSTILE_TEXT = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\ud83d',
  '\udc00\ud800',
  '😀',
  '\u202e',
  '\ufeff',
  '\uffff',
  '\u2028',
  '',
  ' ',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e21',
  '1e309',
  '-1',
  '0',
  '99999999999999999999999999',
  '0x10',
  ' 5',
  'null',
  'true',
  '[]',
  '{}',
  '%',
  '..',
  "'; DROP TABLE prompts; --",
  'latest',
  'Ω≈ç√ 中文 العربية',
  '\\',
  '"',
  '\n\r\t',
  'a'.repeat(3000),
];

const NUMBER_TEXT = [
  'Infinity',
  '-Infinity',
  'NaN',
  '1e21',
  '1e309',
  '1e400',
  '-1e400',
  '99999999999999999999999999',
  '9007199254740993',
  '-0',
  '0.0000000001',
  '1e-7',
  '-1',
  '0',
  '1',
  '2147483648',
  '0x10',
  '1_000',
  '1.',
  '.5',
  '+1',
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 24 }) },
);

export const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NUMBER_TEXT),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
);

/** Bytes of the URL: UTF-8, every byte outside the unreserved set escaped (a lone surrogate goes as U+FFFD). */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Escapes that do not decode as UTF-8, or not at all: what only a raw URL can carry. */
const RAW_ESCAPES = ['%ED%A0%80', '%C0%80', '%FF%FE', '%', '%%', '%0', '%u0000', '%00', '%E2%82', 'a%00b'];

export const urlText = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 16, arbitrary: valid.map(pct) },
    { weight: 3, arbitrary: hostileString.map(pct) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_ESCAPES) },
  );

// ---- JSON Schema → near-valid values ----------------------------------------------------------

export type Schema = Record<string, any>;

const NAMED_TEXT: Record<string, readonly string[]> = {
  start: ['2026-01-01', '2026-11-01T00:00:00Z', '1700000000000', 'yesterday'],
  end: ['2026-12-31', '2027-01-01T00:00:00Z', '1800000000000'],
  started_at: ['2026-11-01T00:00:00Z', '1700000000000'],
  effective_from: ['2026-11-01', '2026-11-01T00:00:00Z'],
  window: ['24h', '30d', '0h', '99999999d'],
  group_by: ['model', 'provider', 'time', 'day', 'tag', 'metadata.plan', 'user', 'agent', 'api_key'],
  model: ['gpt-4o', 'fz-model', 'claude-3-5-sonnet'],
  provider: ['openai', 'anthropic'],
  role: ['admin', 'member', 'viewer', 'user', 'assistant', 'system'],
  currency: ['USD'],
};

export class SchemaArbitraries {
  private readonly byId: Map<string, Schema>;
  constructor(
    schemas: readonly JsonSchema[],
    private readonly known: Record<string, readonly string[]>,
  ) {
    this.byId = new Map(schemas.map((s) => [s.$id, s as Schema]));
  }

  schema(id: string): Schema | undefined {
    return this.byId.get(id);
  }

  /** A value near `schema`, or (one time in `hostility`) a hostile one in its place. */
  value(schema: Schema | undefined, name: string, depth = 0, hostility = 15): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: hostility, arbitrary: this.valid(schema, name, depth, depth === 0 ? 2 * hostility : hostility) },
      { weight: 1, arbitrary: this.hostileValue(depth) },
    );
  }

  hostileValue(depth: number): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: 4, arbitrary: hostileString },
      { weight: 3, arbitrary: numberText.map((t) => (/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? new RawJson(t) : t)) },
      { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, 0, -1, '', [null], { '': null }) },
      {
        weight: 1,
        arbitrary: fc.integer({ min: 60, max: depth > 0 ? 200 : 3000 }).map((n) => new RawJson(`${'['.repeat(n)}${']'.repeat(n)}`)),
      },
      { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 3 }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    );
  }

  private valid(schema: Schema | undefined, name: string, depth: number, hostility: number): fc.Arbitrary<unknown> {
    if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 });
    if (typeof schema.$ref === 'string') return this.valid(this.byId.get(schema.$ref), name, depth, hostility);
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (branches)
      return fc.oneof(...branches.map((b) => this.valid({ ...schema, oneOf: undefined, anyOf: undefined, ...b }, name, depth, hostility)));
    const types = [schema.type ?? []].flat() as string[];
    if (types.length > 1) return fc.oneof(...types.map((t) => this.valid({ ...schema, type: t }, name, depth, hostility)));
    switch (types[0]) {
      case 'object':
        return this.object(schema, depth, hostility);
      case 'array':
        return fc.array(this.value(schema.items as Schema, name, depth + 1, hostility), {
          maxLength: Math.min(4, schema.maxItems ?? 4),
          minLength: Math.min(schema.minItems ?? 0, 4),
        });
      case 'integer':
        return fc.integer({ min: Math.max(schema.minimum ?? -1000, -(2 ** 31)), max: Math.min(schema.maximum ?? 1000, 2 ** 31) });
      case 'number':
        return fc.double({
          min: schema.minimum ?? -1000,
          max: Math.min(schema.maximum ?? 1000, 1e9),
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'string':
        return this.text(schema, name);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private text(schema: Schema, name: string): fc.Arbitrary<string> {
    const named = this.known[name] ?? NAMED_TEXT[name];
    const options: fc.Arbitrary<string>[] = [];
    if (named) options.push(fc.constantFrom(...named));
    if (typeof schema.pattern === 'string') {
      try {
        options.push(fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 4096)));
      } catch {
        // a pattern fast-check cannot generate from: other options only
      }
    }
    if (schema.format === 'uri') options.push(fc.webUrl());
    if (schema.format === 'date-time') options.push(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
    options.push(fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) }));
    return fc.oneof(...options);
  }

  private object(schema: Schema, depth: number, hostility: number): fc.Arbitrary<unknown> {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    const names = Object.keys(props);
    if (names.length === 0) {
      const values =
        typeof schema.additionalProperties === 'object'
          ? this.valid(schema.additionalProperties as Schema, 'value', depth + 1, hostility)
          : fc.jsonValue({ maxDepth: 2 });
      return fc.dictionary(fc.string({ maxLength: 12 }), values, { maxKeys: Math.min(4, schema.maxProperties ?? 4) });
    }
    const required = new Set((schema.required ?? []) as string[]);
    const record = fc.record(Object.fromEntries(names.map((n) => [n, this.value(props[n], n, depth + 1, hostility)])), {
      requiredKeys: names.filter((n) => required.has(n) || depth === 0),
    });
    // Top level: every property offered, then a random subset kept (required ones almost always).
    return fc
      .tuple(record, fc.array(fc.boolean(), { minLength: names.length, maxLength: names.length }), fc.nat(20), hostileString)
      .map(([r, keep, dropRequired, unknownKey]) => {
        const out: Record<string, unknown> = {};
        names.forEach((n, i) => {
          if (!(n in r)) return;
          if (required.has(n) ? dropRequired > 0 : keep[i]) out[n] = r[n];
        });
        if (dropRequired === 1) out[unknownKey] = 1; // an unknown (possibly hostile) key
        return out;
      });
  }
}

export function otlpBody(): fc.Arbitrary<unknown> {
  const hex = (n: number) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('hex')) },
      { weight: 1, arbitrary: hostileString },
    );
  const v = fc.oneof(
    hostileString,
    numberText.map((t) => new RawJson(JSON.stringify(t))),
  );
  const attr = fc.record({
    key: fc.oneof(
      fc.constantFrom('gen_ai.request.model', 'gen_ai.usage.input_tokens', 'gen_ai.prompt', 'user.id', 'traceloom.prompt.id'),
      hostileString,
    ),
    value: fc.oneof(
      v.map((s) => ({ stringValue: s })),
      numberText.map((t) => ({ intValue: t })),
      numberText.map((t) => ({ doubleValue: /^-?\d/.test(t) ? new RawJson(t) : t })),
      fc.constant({ kvlistValue: { values: [{ key: '\u0000', value: { stringValue: '\ud800' } }] } }),
    ),
  });
  const span = fc.record({
    traceId: hex(16),
    spanId: hex(8),
    name: hostileString,
    kind: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 5 }) },
      { weight: 1, arbitrary: fc.integer({ min: -1, max: 9 }) },
      { weight: 1, arbitrary: hostileString },
    ),
    startTimeUnixNano: numberText,
    endTimeUnixNano: numberText,
    attributes: fc.array(attr, { maxLength: 4 }),
  });
  return fc.oneof(
    fc.record({
      resourceSpans: fc.array(
        fc.record({
          resource: fc.record({ attributes: fc.array(attr, { maxLength: 2 }) }),
          scopeSpans: fc.array(fc.record({ spans: fc.array(span, { maxLength: 3 }) }), { maxLength: 2 }),
        }),
        { maxLength: 2 },
      ),
    }),
    fc.record({
      spans: fc.array(
        fc.record({
          trace_id: hex(16),
          span_id: hex(8),
          span_name: hostileString,
          attributes: fc.dictionary(hostileString, fc.oneof(hostileString, fc.integer())),
        }),
        { maxLength: 3 },
      ),
    }),
    fc.record({
      resourceLogs: fc.array(
        fc.record({
          scopeLogs: fc.array(
            fc.record({
              logRecords: fc.array(
                fc.record({ body: fc.record({ stringValue: hostileString }), attributes: fc.array(attr, { maxLength: 3 }) }),
                { maxLength: 3 },
              ),
            }),
            { maxLength: 2 },
          ),
        }),
        { maxLength: 2 },
      ),
    }),
    fc.record({
      resourceMetrics: fc.array(
        fc.record({
          scopeMetrics: fc.array(
            fc.record({
              metrics: fc.array(
                fc.record({
                  name: hostileString,
                  sum: fc.record({
                    dataPoints: fc.array(fc.record({ asInt: numberText, attributes: fc.array(attr, { maxLength: 2 }) }), { maxLength: 2 }),
                  }),
                }),
                { maxLength: 2 },
              ),
            }),
            { maxLength: 2 },
          ),
        }),
        { maxLength: 2 },
      ),
    }),
    fc.jsonValue({ maxDepth: 4 }),
  );
}
