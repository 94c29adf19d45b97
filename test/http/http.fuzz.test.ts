// No request can stop the service (issue 30): every route of the route table, fuzzed over real
// HTTP with near-valid and hostile path parameters, queries and bodies, answers below 500, and
// every error is exactly {"detail": string}. The cases the first fuzz run found are pinned too,
// with the detail that names the field.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiSchemas, type JsonSchema } from '../../src/http/validation.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { everyRoute, describeRequest, send, sendAll, startFuzzTarget, type FuzzRequest, type FuzzTarget } from '../helpers/request-fuzz.ts';

/**
 * Runs of the property below: each sends one generated request to every route at once. The volume
 * (100,000 requests by default) is `npm run bench fuzz`'s (BENCHMARKS.md, "Request fuzzing").
 */
const RUNS = 30;

let target: FuzzTarget;
beforeAll(async () => {
  target = await startFuzzTarget();
});
afterAll(async () => {
  await target?.close();
  await dropTestDatabases();
});

const schemas = loadApiSchemas();

/** Every numeric field a request can carry, with its bounds, through $ref. */
function numericFields(
  schema: unknown,
  at: string,
  byId: Map<string, JsonSchema>,
  out: Array<[string, unknown, unknown]>,
  seen = new Set<string>(),
) {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const s of schema) numericFields(s, at, byId, out, seen);
    return;
  }
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === 'string' && !seen.has(s.$ref)) {
    seen.add(s.$ref);
    numericFields(byId.get(s.$ref), s.$ref, byId, out, seen);
  }
  const types = [s.type ?? []].flat();
  if (types.includes('integer') || types.includes('number'))
    out.push([at, s.minimum ?? s.exclusiveMinimum, s.maximum ?? s.exclusiveMaximum]);
  for (const [k, v] of Object.entries(s)) if (k !== '$ref' && v && typeof v === 'object') numericFields(v, `${at}.${k}`, byId, out, seen);
}

describe(`request validation (${mode} mode)`, () => {
  it('every numeric field of every request body and query schema is bounded, within Number.MAX_SAFE_INTEGER', () => {
    const byId = new Map(schemas.map((s) => [s.$id, s]));
    const fields: Array<[string, unknown, unknown]> = [];
    for (const r of target.svc.app.routes) for (const id of [r.body, r.query]) if (id) numericFields(byId.get(id), id, byId, fields);
    expect(fields.length).toBeGreaterThan(10);
    const bounded = (b: unknown) => typeof b === 'number' && Math.abs(b) <= Number.MAX_SAFE_INTEGER;
    expect(fields.filter(([, lo, hi]) => !bounded(lo) || !bounded(hi)).map(([at]) => at)).toEqual([]);
  });

  const P = '/api/projects/fuzz';
  const cases: Array<[string, string, unknown, RegExp]> = [
    ['GET', `${P}/prompts/a%00b`, undefined, /^Invalid path parameter: prompt_id: must not contain NUL \(U\+0000\)$/],
    ['GET', `/api/projects/%00/prompts`, undefined, /^Invalid path parameter: project_id: must not contain NUL/],
    ['PUT', `${P}/prompts/fz-prompt/labels/%00`, { version: 1 }, /^Invalid path parameter: label: must not contain NUL/],
    ['GET', `${P}/models?q=%00`, undefined, /^Invalid query parameter: q: must not contain NUL \(U\+0000\)$/],
    ['GET', `${P}/prompts?%00=1`, undefined, /^Invalid query parameter: a parameter name must not contain NUL/],
    ['GET', `${P}/executions?tag=a&tag=b%00`, undefined, /^Invalid query parameter: tag\.1: must not contain NUL/],
    ['GET', `${P}/prompts?limit=Infinity`, undefined, /^Invalid query parameter: limit: must be an integer/],
    ['GET', `${P}/prompts?limit=%205`, undefined, /^Invalid query parameter: limit: must be an integer/],
    ['GET', `${P}/prompts?offset=1e21`, undefined, /^Invalid query parameter: offset: must be an integer/],
    ['GET', `${P}/prompts?offset=99999999999999999999`, undefined, /^Invalid query parameter: offset: must be an integer between/],
    ['GET', `${P}/prompts?offset=1000001`, undefined, /^Invalid query parameter: offset: must be <= 1000000$/],
    ['GET', `${P}/models?offset=1e21`, undefined, /^Invalid query parameter: offset: must be an integer/],
    ['GET', `${P}/prompts?limit=1e309`, undefined, /^Invalid query parameter: limit: must be an integer/],
    ['GET', `${P}/spend?limit=1e400`, undefined, /^Invalid query parameter: limit: must be an integer/],
    ['GET', `${P}/executions?min_cost=99999999999999999999999999`, undefined, /^Invalid query parameter: min_cost: must match pattern/],
    ['GET', `${P}/executions?max_cost=Infinity`, undefined, /^Invalid query parameter: max_cost: must match pattern/],
    ['GET', `${P}/executions/export?max_cost=Infinity`, undefined, /^Invalid query parameter: max_cost: must match pattern/],
    ['GET', `${P}/spend?end=0`, undefined, /^end: must be after 1970-01-01T00:00:00Z, got "0"$/],
    ['GET', `${P}/stats?end=0`, undefined, /^end: must be after 1970-01-01T00:00:00Z, got "0"$/],
    [
      'POST',
      `${P}/prompts`,
      { prompt_id: 'x', type: 'text', template: 'a\u0000b' },
      /^Invalid body: template: must not contain NUL \(U\+0000\)$/,
    ],
    [
      'POST',
      `${P}/prompts`,
      { prompt_id: 'x', type: 'text', template: 'a\ud800b' },
      /^Invalid body: template: must not contain a lone surrogate \(U\+D800\)$/,
    ],
    [
      'POST',
      `${P}/prompts`,
      { prompt_id: 'x', type: 'text', template: 'a', config: { ['k\u0000']: 1 } },
      /^Invalid body: config: a key must not contain NUL/,
    ],
    [
      'POST',
      `${P}/prompts`,
      { prompt_id: 'x', type: 'chat', template: [{ role: 'user', content: '\udc00' }] },
      /^Invalid body: template\.0\.content: must not contain a lone surrogate \(U\+DC00\)$/,
    ],
    ['POST', `${P}/executions`, { trace_id: 't-nul', agent_id: 'a\u0000' }, /^Invalid body: agent_id: must not contain NUL/],
  ];
  it.each(cases)('%s %s → 400 naming the field', async (method, path, body, detail) => {
    const r = await send(target.svc.url, {
      route: path,
      method,
      path,
      headers: { 'X-API-Key': target.ctx.apiKey, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    });
    expect(r.status, r.body).toBe(400);
    expect(Object.keys(JSON.parse(r.body))).toEqual(['detail']);
    expect(JSON.parse(r.body).detail).toMatch(detail);
  });

  it('a body number that parses to Infinity, and nesting over 64 levels, are 400s naming the field', async () => {
    const post = (text: string) =>
      send(target.svc.url, {
        route: 'render',
        method: 'POST',
        path: `${P}/prompts/fz-prompt/render`,
        headers: { 'X-API-Key': target.ctx.apiKey, 'Content-Type': 'application/json' },
        body: Buffer.from(text),
      });
    const inf = await post('{"inputs":{"name":1e400}}');
    expect(inf.status).toBe(400);
    expect(JSON.parse(inf.body)).toEqual({ detail: 'Invalid body: inputs.name: must be a finite number' });
    const deep = await post(`{"inputs":{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`);
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.body).detail).toMatch(/^Invalid body: inputs\.name(\.0)+: nested deeper than 64 levels$/);
    // a surrogate pair is one character, and fine
    const ok = await post('{"inputs":{"name":"\\ud83d\\ude00"}}');
    expect(ok.status, ok.body).toBe(200);
  });

  it(`${RUNS} generated requests to each route: no 5xx, every error exactly {"detail": string}, most reach the handler`, async () => {
    const routes = target.svc.app.routes;
    const statuses = new Map<string, Map<number, number>>();
    const record = (req: FuzzRequest, res: { status: number }) => {
      const m = statuses.get(req.route) ?? new Map<number, number>();
      m.set(res.status, (m.get(res.status) ?? 0) + 1);
      statuses.set(req.route, m);
    };
    await fc.assert(
      fc.asyncProperty(everyRoute(routes, schemas, target.ctx), async (batch) => {
        const problems = await sendAll(target.svc.url, batch, record);
        if (problems.length > 0) throw new Error(problems.join('\n'));
      }),
      // A fixed seed: the same requests every run, so how many routes they reach does not vary by chance.
      // No shrinking: a batch's problems are listed whole, each with its request.
      { numRuns: RUNS, seed: 27, endOnFailure: true },
    );
    // Every route was called, and the handlers were reached: most routes answered something
    // other than a refusal of the input or the caller at least once.
    expect([...statuses.keys()].sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    const refusals = new Set([400, 401, 403, 404, 405, 413, 415]);
    const reached = routes.filter((r) => [...(statuses.get(`${r.method} ${r.path}`)?.keys() ?? [])].some((s) => !refusals.has(s)));
    expect(reached.length / routes.length).toBeGreaterThan(0.8);
    const total = [...statuses.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0);
    expect(total).toBe(RUNS * routes.length);
  }, 300_000); // ~8 s alone

  it('the generated requests include the hostile cases (so the property above can fail)', () => {
    const sample = fc
      .sample(everyRoute(target.svc.app.routes, schemas, target.ctx), { numRuns: 50, seed: 30 })
      .flat()
      .map(describeRequest);
    expect(sample.some((d) => /%00/.test(d))).toBe(true);
    expect(sample.some((d) => /\\ud[89ab][0-9a-f]{2}/i.test(d))).toBe(true);
    expect(sample.some((d) => /=(Infinity|1e21|1e309)\b/.test(d))).toBe(true);
    expect(sample.some((d) => /1e400/.test(d))).toBe(true);
    expect(sample.some((d) => /\[\[\[\[\[\[\[\[/.test(d))).toBe(true);
  });
});
