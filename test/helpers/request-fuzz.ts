// Request fuzzing of every route of the route table, for test/http/http.fuzz.test.ts and `npm run bench
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
import { hostileString, numberText, otlpBody, pct, RawJson, SchemaArbitraries, toJsonText, urlText, type Schema } from './fuzz-values.ts';
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

/** One request to each route of the table, in the table's order. */
export function everyRoute(routes: readonly RouteDef[], schemas: readonly JsonSchema[], ctx: FuzzContext): fc.Arbitrary<FuzzRequest[]> {
  const s = new SchemaArbitraries(schemas, ctx.known);
  return fc.tuple(...routes.map((r) => requestFor(r, s, ctx)));
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
    idp.env({
      AUTH_REQUIRED: 'true',
      TRACELOOM_INIT_PROJECT_ID: projectId,
      TRACELOOM_INIT_API_KEY: apiKey,
      SECRETS_KEY: crypto.randomBytes(32).toString('hex'), // model connections (server stores need it)
      ...overrides,
    }),
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
  const dataset = await call('POST', '/datasets', { name: 'fz-dataset' });
  const item = await call('POST', `/datasets/${dataset.dataset_id}/items`, { input: { q: 'fz' } });
  const run = await call('POST', `/datasets/${dataset.dataset_id}/runs`, { name: 'fz-run' });
  await call('POST', `/datasets/${dataset.dataset_id}/runs/${run.run_id}/items`, { item_id: item.item_id, trace_id: 'fz-trace-1' });
  // An import the generated reads of imports can find.
  const imported = await fetch(`${svc.url}/api/projects/${projectId}/datasets/${dataset.dataset_id}/items/import?import_id=fz-import`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/x-ndjson' },
    body: '{"input":{"q":"fz-imported"}}\n',
  });
  if (imported.status >= 300) throw new Error(`seeding the import: ${imported.status} ${await imported.text()}`);
  // A run the fuzz does not know: the dataset cannot be deleted under the requests (a dataset with runs is refused).
  await call('POST', `/datasets/${dataset.dataset_id}/runs`, { name: 'fz-kept-run' });
  // Evaluators that judge nothing (paused, no agent matches), and their connection and score config.
  const admin = async (path: string, body: unknown) => {
    const r = await getJson(`${svc.url}/api/projects/${projectId}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${jwt}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`seeding POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const config = await admin('/score-configs', { name: 'fz-score', data_type: 'NUMERIC' });
  const connection = await admin('/model-connections', {
    name: 'fz-judge',
    base_url: 'https://judge.example.com/v1',
    model: 'm',
    api_key: 'sk-fuzz',
  });
  const scoreIds = ['fz-score-1', 'fz-score-2', 'fz-score-3'];
  for (const id of scoreIds) await call('POST', '/scores', { id, trace_id: 'fz-trace-1', name: `fz-${id}`, value: 1 });
  // Keys the routes of one key can find (the generated DELETEs may revoke them).
  const keyIds: string[] = [];
  for (let i = 0; i < 2; i++) keyIds.push((await admin('/api-keys', { name: `fz-key-${i}` })).key_id);
  // Several: the generated DELETEs remove them one by one, and the other routes should still find one.
  const evaluatorIds: string[] = [];
  for (let i = 0; i < 4; i++) {
    const evaluator = await admin('/evaluators', {
      name: `fz-evaluator-${i}`,
      prompt_id: 'fz-prompt',
      prompt_label: 'prod',
      variables: { name: 'output' },
      connection_id: connection.connection_id,
      score_name: 'fz-score',
      target: { kind: 'executions', filter: { agent_id: ['nobody'] } },
      paused: true,
    });
    evaluatorIds.push(evaluator.evaluator_id);
  }
  // An experiment (its items fail at once: the prompt's variable is not in them, so nothing is called) and a monitor.
  const experiment = await admin(`/datasets/${dataset.dataset_id}/experiments`, {
    name: 'fz-experiment',
    prompt: { prompt_id: 'fz-prompt' },
    connection_id: connection.connection_id,
    max_attempts: 1,
  });
  const monitor = await admin('/monitors', {
    name: 'fz-monitor',
    metric: { kind: 'error_rate' },
    window_minutes: 60,
    condition: { kind: 'threshold', op: '>', value: 0.5 },
  });
  const known: Record<string, readonly string[]> = {
    prompt_id: ['fz-prompt'],
    version: ['1', '2', 'latest', 'prod'],
    a: ['1', '2', 'prod'],
    b: ['2', 'latest'],
    label: ['prod', 'staging'],
    model: ['fz-model', 'gpt-4o'],
    trace_id: ['fz-trace-1'],
    budget_id: [String(budget.id)],
    dataset_id: [dataset.dataset_id],
    item_id: [item.item_id],
    run_id: [run.run_id],
    import_id: ['fz-import'],
    connection_id: [connection.connection_id],
    evaluator_id: evaluatorIds,
    score_id: scoreIds,
    config_id: [config.config_id],
    key_id: keyIds,
    experiment_id: [experiment.experiment_id],
    monitor_id: [monitor.monitor_id],
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
