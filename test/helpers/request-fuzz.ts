// Request fuzzing of every route of the route table, for test/http.fuzz.test.ts and `npm run bench
// fuzz`. Requests are generated from each route's declaration (path parameters, the JSON Schemas
// of its query and body, raw OTLP bodies), mostly near-valid so that authentication and the
// schema pass and the handlers and stores are reached, with hostile values mixed in: NUL, lone
// surrogates, invalid UTF-8 escapes, non-finite and huge numbers, wrong types, deep nesting.
// A route added to the table is fuzzed without a change here.
import crypto from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import type { RouteDef } from '../../src/http/routes/types.ts';
import type { JsonSchema } from '../../src/http/validation.ts';
import { TestIdp } from './idp.ts';
import { getJson, startTestService, type TestService } from './service.ts';

export interface FuzzRequest {
  route: string;
  method: string;
  /** Already percent-encoded: sent byte for byte. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface FuzzResult {
  status: number;
  body: string;
}

/** Who calls, and values that exist in the project, so that handlers get past their lookups. */
export interface FuzzContext {
  projectId: string;
  apiKey: string;
  /** A JWT admin of the project, for `jwtOnly` routes (key management). */
  jwt?: string;
  known: Record<string, readonly string[]>;
}

/** JSON text inserted as is (numbers JSON.stringify cannot write: 1e400, -0, 99999999999999999999). */
class RawJson {
  constructor(readonly text: string) {}
}

function toJsonText(v: unknown): string {
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

const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NUMBER_TEXT),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
);

/** Bytes of the URL: UTF-8, every byte outside the unreserved set escaped (a lone surrogate goes as U+FFFD). */
function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Escapes that do not decode as UTF-8, or not at all: what only a raw URL can carry. */
const RAW_ESCAPES = ['%ED%A0%80', '%C0%80', '%FF%FE', '%', '%%', '%0', '%u0000', '%00', '%E2%82', 'a%00b'];

const urlText = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 16, arbitrary: valid.map(pct) },
    { weight: 3, arbitrary: hostileString.map(pct) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_ESCAPES) },
  );

// ---- JSON Schema → near-valid values ----------------------------------------------------------

type Schema = Record<string, any>;

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

// ---- requests ---------------------------------------------------------------------------------

const GARBAGE_BODIES = [
  '',
  '{',
  '{"a":',
  'null',
  '[]',
  '"x"',
  '{"a":1e400}',
  '\ufeff{}',
  '{"__proto__":{"x":1}}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
];

function otlpBody(): fc.Arbitrary<unknown> {
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

function bodyFor(route: RouteDef, s: SchemaArbitraries): fc.Arbitrary<{ body?: Buffer; contentType?: string }> {
  const json = (a: fc.Arbitrary<unknown>) => a.map((v) => ({ body: Buffer.from(toJsonText(v), 'utf8'), contentType: 'application/json' }));
  const garbage = fc.record({
    body: fc.oneof(fc.constantFrom(...GARBAGE_BODIES), fc.string({ unit: 'binary', maxLength: 60 })).map((t) => Buffer.from(t, 'utf8')),
    contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-protobuf', 'application/json; charset=latin1'),
  });
  if (route.body) {
    return fc.oneof({ weight: 12, arbitrary: json(s.value(s.schema(route.body), 'body')) }, { weight: 1, arbitrary: garbage });
  }
  if (route.rawBody) {
    const proto = fc.uint8Array({ maxLength: 200 }).map((b) => ({ body: Buffer.from(b), contentType: 'application/x-protobuf' }));
    return fc.oneof({ weight: 8, arbitrary: json(otlpBody()) }, { weight: 2, arbitrary: proto }, { weight: 1, arbitrary: garbage });
  }
  return fc.constant({});
}

function queryFor(route: RouteDef, s: SchemaArbitraries): fc.Arbitrary<string> {
  const schema = route.query ? s.schema(route.query) : undefined;
  const props = (schema?.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(props);
  const name = names.length
    ? fc.oneof(
        { weight: 20, arbitrary: fc.constantFrom(...names) },
        { weight: 1, arbitrary: fc.constantFrom('metadata.plan', 'metadata.\u0000') },
        { weight: 1, arbitrary: hostileString },
      )
    : hostileString;
  const pair = name.chain((n) => {
    const p = props[n];
    const valid = p
      ? s
          .value(p.type === 'array' ? p.items : p, n, 1, 1000)
          .map((v) => (typeof v === 'string' ? v : v instanceof RawJson ? v.text : (JSON.stringify(v) ?? '')))
      : fc.string({ maxLength: 8 });
    return fc
      .tuple(urlText(fc.constant(n)), fc.oneof({ weight: 12, arbitrary: urlText(valid) }, { weight: 1, arbitrary: numberText.map(pct) }))
      .map(([k, v]) => `${k}=${v}`);
  });
  // A route without a query schema ignores its query: one parameter now and then is enough.
  const pairs = route.query
    ? fc.array(pair, { maxLength: 3 })
    : fc.oneof({ weight: 5, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(pair, { maxLength: 1 }) });
  return pairs.map((ps) => (ps.length ? `?${ps.join('&')}` : ''));
}

/** One request to `route`: path parameters, query and body from its declaration; credentials to pass. */
export function requestFor(route: RouteDef, s: SchemaArbitraries, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const segments = route.path.split(/(:[A-Za-z_][A-Za-z0-9_]*)/);
  const parts = segments.map((seg) => {
    if (!seg.startsWith(':')) return fc.constant(seg);
    const name = seg.slice(1);
    // The project: nearly always the caller's, or authorization ends the request before the handler.
    if (name === 'project_id') {
      return fc.oneof(
        { weight: 20, arbitrary: fc.constant(pct(ctx.projectId)) },
        { weight: 1, arbitrary: urlText(fc.string({ minLength: 1, maxLength: 20 })) },
      );
    }
    const known = ctx.known[name] ?? [];
    const valid = known.length
      ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) })
      : fc.string({ minLength: 1, maxLength: 20 });
    return urlText(valid);
  });
  const auth = fc.oneof(
    {
      weight: 30,
      arbitrary: fc.constant<Record<string, string>>(
        route.jwtOnly && ctx.jwt ? { Authorization: `Bearer ${ctx.jwt}` } : { 'X-API-Key': ctx.apiKey },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, string>>(
        {},
        { 'X-API-Key': 'tl_nope' },
        { Authorization: 'Bearer not.a.jwt' },
        { Authorization: 'Basic Og==' },
      ),
    },
  );
  return fc.tuple(fc.tuple(...parts), queryFor(route, s), bodyFor(route, s), auth).map(([p, query, b, headers]) => ({
    route: `${route.method} ${route.path}`,
    method: route.method,
    path: `${p.join('')}${query}`,
    headers: { ...headers, ...(b.contentType ? { 'Content-Type': b.contentType } : {}) },
    body: b.body,
  }));
}

/** Whether a route takes input beyond the project: path parameters, a query or a body. */
const hasInput = (r: RouteDef) => Boolean(r.body || r.rawBody || r.query || r.path.replace(':project_id', '').includes(':'));

/** A request to any route of the table; routes that take input three times as often as those that take none. */
export function anyRequest(routes: readonly RouteDef[], schemas: readonly JsonSchema[], ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const s = new SchemaArbitraries(schemas, ctx.known);
  return fc.oneof(...routes.map((r) => ({ weight: hasInput(r) ? 3 : 1, arbitrary: requestFor(r, s, ctx) })));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

export function send(baseUrl: string, req: FuzzRequest, timeoutMs = 30_000): Promise<FuzzResult> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        agent,
        headers: { ...req.headers, ...(req.body ? { 'Content-Length': String(req.body.length) } : {}) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

/** What is wrong with an answer: a 5xx, or an error body that is not exactly {"detail": string}. */
export function problemOf(res: FuzzResult): string | undefined {
  if (res.status >= 500) return `answered ${res.status}: ${res.body.slice(0, 300)}`;
  if (res.status < 400) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `error ${res.status} with a body that is not JSON: ${JSON.stringify(res.body.slice(0, 200))}`;
  }
  const keys = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  if (keys.length !== 1 || keys[0] !== 'detail' || typeof (body as { detail: unknown }).detail !== 'string') {
    return `error ${res.status} with a body other than {"detail": string}: ${res.body.slice(0, 200)}`;
  }
  return undefined;
}

export const describeRequest = (req: FuzzRequest) =>
  `${req.method} ${req.path}${req.body ? ` (${req.headers['Content-Type'] ?? 'no type'}) ${JSON.stringify(req.body.toString('utf8').slice(0, 300))}` : ''}`;

/** Sends `requests` at once; the problems found, each with its request. */
export async function sendAll(
  baseUrl: string,
  requests: readonly FuzzRequest[],
  onResult?: (req: FuzzRequest, res: FuzzResult) => void,
): Promise<string[]> {
  const results = await Promise.all(
    requests.map(async (req) => {
      try {
        const res = await send(baseUrl, req);
        onResult?.(req, res);
        const p = problemOf(res);
        return p ? `${describeRequest(req)} → ${p}` : undefined;
      } catch (err) {
        return `${describeRequest(req)} → ${(err as Error).message}`;
      }
    }),
  );
  return results.filter((x): x is string => x !== undefined);
}

// ---- the service under fuzz -------------------------------------------------------------------

export interface FuzzTarget {
  svc: TestService;
  ctx: FuzzContext;
  close(): Promise<void>;
}

/**
 * The real service on the test stores, authentication on, with an admin API key of project
 * `fuzz` (TRACELOOM_INIT_*) and a JWT admin for the routes only a JWT may call; a prompt with two
 * versions and a label, a project price and an execution exist, so lookups find something.
 */
export async function startFuzzTarget(overrides: Record<string, string> = {}): Promise<FuzzTarget> {
  const idp = await new TestIdp().start();
  const projectId = 'fuzz';
  const apiKey = `tl_${crypto.randomBytes(40).toString('hex').slice(0, 40)}`;
  const svc = await startTestService(
    idp.env({ AUTH_REQUIRED: 'true', TRACELOOM_INIT_PROJECT_ID: projectId, TRACELOOM_INIT_API_KEY: apiKey, ...overrides }),
  );
  const jwt = await idp.token({ sub: 'fuzz-admin', project_id: projectId, role: 'admin' }, { expSeconds: 24 * 3600 });
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await getJson(`${svc.url}/api/projects/${projectId}${path}`, {
      method,
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`seeding ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await call('POST', '/prompts', { prompt_id: 'fz-prompt', type: 'text', template: 'Hello {{name}}', labels: ['prod'] });
  await call('POST', '/prompts/fz-prompt/versions', { template: 'Hi {{name}}' });
  await call('PUT', '/models/fz-model', { input_per_mtok: 1, output_per_mtok: 2 });
  await call('POST', '/executions', { trace_id: 'fz-trace-1', provider: 'openai', model: 'gpt-4o', tokens_in: 10, tokens_out: 5 });
  const budget = await call('POST', '/budgets', { scope: { kind: 'agent', value: 'fz-agent' }, period: 'month', amount_usd: 10 });
  const known: Record<string, readonly string[]> = {
    prompt_id: ['fz-prompt'],
    version: ['1', '2', 'latest', 'prod'],
    a: ['1', '2', 'prod'],
    b: ['2', 'latest'],
    label: ['prod', 'staging'],
    model: ['fz-model', 'gpt-4o'],
    trace_id: ['fz-trace-1'],
    budget_id: [String(budget.id)],
  };
  return {
    svc,
    ctx: { projectId, apiKey, jwt, known },
    async close() {
      await svc.close();
      await idp.stop();
    },
  };
}
