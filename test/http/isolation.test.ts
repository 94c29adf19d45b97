// Tenant isolation, generated from the route table: every project-scoped route that exists (now
// or added later) × {API key, JWT} × {own project, another tenant's project, a project that does
// not exist} gets the expected status, and no response to tenant A carries tenant B's data.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allows } from '../../src/auth/principal.ts';
import type { RouteDef } from '../../src/http/routes/types.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

/** A valid body per request schema, so "own project" calls reach the handler. New schemas fall back to {}. */
const SAMPLE_BODIES: Record<string, unknown> = {
  ApiKeyCreate: { name: 'matrix' },
  PromptCreate: { prompt_id: 'matrix-prompt', type: 'text', template: 'x' },
  PromptVersionCreate: { template: 'y' },
  PromptRollback: { version: 1 },
  PromptLabelSet: { version: 1 },
  PromptLabelGateSet: { dataset_id: '00000000-0000-4000-8000-000000000000', scores: ['quality'] },
  PromptLabelApprovalCreate: { version: 1 },
  PromptRender: { inputs: {} },
  ExecutionCreate: { trace_id: 'matrix-exec' },
  ScoreCreateRequest: { trace_id: 'matrix-exec', name: 'matrix', value: 1 },
  ScoreConfigCreate: { name: 'matrix', data_type: 'NUMERIC' },
  DatasetCreate: { name: 'matrix' },
  DatasetUpdate: { description: 'matrix' },
  DatasetItemCreateRequest: { input: 'matrix' },
  DatasetItemUpdate: { input: 'matrix' },
  DatasetItemFromExecution: { trace_id: 'canary-trace' },
  DatasetRunCreate: { name: 'matrix' },
  DatasetRunItemLinkRequest: { item_id: '00000000-0000-4000-8000-000000000000', trace_id: 'canary-trace' },
  ModelConnectionCreate: { name: 'matrix', base_url: 'https://judge.example.com/v1', model: 'm', api_key: 'sk-matrix-key' },
  EvaluatorBackfill: { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' },
  ExperimentCreate: { name: 'matrix', prompt: { prompt_id: 'matrix-prompt' }, connection_id: '00000000-0000-4000-8000-000000000000' },
  ExperimentResume: {},
  MonitorCreate: {
    name: 'matrix',
    metric: { kind: 'error_rate' },
    window_minutes: 60,
    condition: { kind: 'threshold', op: '>', value: 0.5 },
  },
  MonitorUpdate: { enabled: false },
};

/** Other path parameters name one of tenant B's objects: the worst case. */
const B_PARAMS: Record<string, () => string> = {
  key_id: () => tenants.b.keyId,
  prompt_id: () => 'canary-prompt',
  version: () => '1',
  a: () => '1',
  b: () => 'latest',
  label: () => 'production',
  trace_id: () => 'canary-trace',
  score_id: () => 'canary-score',
  config_id: () => tenants.b.configId,
  dead_letter_id: () => '1',
  dataset_id: () => tenants.b.datasetId,
  item_id: () => tenants.b.itemId,
  run_id: () => tenants.b.runId,
  connection_id: () => tenants.b.connectionId,
  evaluator_id: () => tenants.b.evaluatorId,
  monitor_id: () => tenants.b.monitorId,
};

const idp = new TestIdp();
let svc: TestService;
const canary = { a: `CANARY-A-${crypto.randomUUID()}`, b: `CANARY-B-${crypto.randomUUID()}` };
interface Tenant {
  project: string;
  jwt: string;
  key: string;
  keyId: string;
  configId: string;
  datasetId: string;
  itemId: string;
  runId: string;
  connectionId: string;
  evaluatorId: string;
  monitorId: string;
}
const tenants: Record<'a' | 'b', Tenant> = {} as never;

beforeAll(async () => {
  await idp.start();
  // SECRETS_KEY: server stores need it for model connections (embedded ones make their own).
  svc = await startTestService(idp.env({ AUTH_REQUIRED: 'true', SECRETS_KEY: crypto.randomBytes(32).toString('hex') }));
  for (const t of ['a', 'b'] as const) {
    const project = `tenant-${t}`;
    const jwt = await idp.token({ sub: `admin-${t}`, project_id: project, role: 'admin' });
    const r = await getJson(`${svc.url}/api/projects/${project}/api-keys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ name: canary[t] }),
    });
    expect(r.status).toBe(201);
    tenants[t] = {
      project,
      jwt,
      key: r.body.key,
      keyId: r.body.key_id,
      configId: '',
      datasetId: '',
      itemId: '',
      runId: '',
      connectionId: '',
      evaluatorId: '',
      monitorId: '',
    };
  }
  const p = await getJson(`${svc.url}/api/projects/tenant-b/prompts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tenants.b.jwt}` },
    body: JSON.stringify({ prompt_id: 'canary-prompt', type: 'text', template: `secret ${canary.b}`, labels: ['production'] }),
  });
  expect(p.status).toBe(201);
  const e = await getJson(`${svc.url}/api/projects/tenant-b/executions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': tenants.b.key },
    body: JSON.stringify({ trace_id: 'canary-trace', metadata: { secret: canary.b }, cost_usd: 1 }),
  });
  expect(e.status).toBe(201);
  const score = await getJson(`${svc.url}/api/projects/tenant-b/scores`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': tenants.b.key },
    body: JSON.stringify({ id: 'canary-score', trace_id: 'canary-trace', name: 'quality', value: 0.5, comment: canary.b }),
  });
  expect(score.status).toBe(201);
  const config = await getJson(`${svc.url}/api/projects/tenant-b/score-configs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tenants.b.jwt}` },
    body: JSON.stringify({ name: 'quality', data_type: 'NUMERIC', description: canary.b }),
  });
  expect(config.status).toBe(201);
  tenants.b.configId = config.body.config_id;
  // A dataset of B's with an item and a run linked to B's execution, each carrying the canary.
  const asB = (path: string, body: unknown) =>
    getJson(`${svc.url}/api/projects/tenant-b${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tenants.b.jwt}` },
      body: JSON.stringify(body),
    });
  const dataset = await asB('/datasets', { name: 'canary-dataset', description: canary.b });
  expect(dataset.status).toBe(201);
  tenants.b.datasetId = dataset.body.dataset_id;
  const item = await asB(`/datasets/${tenants.b.datasetId}/items`, { input: canary.b, expected_output: canary.b });
  expect(item.status).toBe(201);
  tenants.b.itemId = item.body.item_id;
  const run = await asB(`/datasets/${tenants.b.datasetId}/runs`, { name: 'canary-run', metadata: { secret: canary.b } });
  expect(run.status).toBe(201);
  tenants.b.runId = run.body.run_id;
  expect(
    (await asB(`/datasets/${tenants.b.datasetId}/runs/${tenants.b.runId}/items`, { item_id: tenants.b.itemId, trace_id: 'canary-trace' }))
      .status,
  ).toBe(200);
  // B's judge: its API key is the canary (never to be seen by A), and it judges nothing (no agent matches).
  const connection = await getJson(`${svc.url}/api/projects/tenant-b/model-connections`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tenants.b.jwt}` },
    body: JSON.stringify({ name: 'judge', base_url: 'https://judge.example.com/v1', model: 'm', api_key: canary.b }),
  });
  expect(connection.status, JSON.stringify(connection.body)).toBe(201);
  tenants.b.connectionId = connection.body.connection_id;
  const evaluator = await getJson(`${svc.url}/api/projects/tenant-b/evaluators`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tenants.b.jwt}` },
    body: JSON.stringify({
      name: canary.b,
      prompt_id: 'canary-prompt',
      connection_id: tenants.b.connectionId,
      score_name: 'quality',
      target: { kind: 'executions', filter: { agent_id: ['nobody'] } },
      paused: true,
    }),
  });
  expect(evaluator.status, JSON.stringify(evaluator.body)).toBe(201);
  tenants.b.evaluatorId = evaluator.body.evaluator_id;
  // B's monitor: its name and webhook URL are the canary; it has been evaluated, so it has figures.
  const monitor = await asB('/monitors', {
    name: canary.b,
    metric: { kind: 'cost_per_execution' },
    window_minutes: 60,
    condition: { kind: 'threshold', op: '>', value: 1000 },
    interval_minutes: 1440,
    webhook_url: `https://hooks.example.com/${canary.b}`,
  });
  expect(monitor.status, JSON.stringify(monitor.body)).toBe(201);
  tenants.b.monitorId = monitor.body.monitor_id;
  expect((await asB(`/monitors/${tenants.b.monitorId}/evaluate`, undefined)).status).toBe(200);
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

type Caller = 'api_key' | 'jwt';
type Target = 'own' | 'other' | 'missing';

function expectedDenied(route: RouteDef, caller: Caller, target: Target): boolean {
  if (target !== 'own') return true;
  if (route.jwtOnly && caller === 'api_key') return true;
  const role = caller === 'api_key' ? 'member' : 'admin';
  return !allows(role, route.need ?? 'read');
}

const projectRoutes = () => svc.app.routes.filter((r) => r.path.includes(':project_id'));

describe(`tenant isolation matrix (${mode} mode)`, () => {
  it('covers every project-scoped route of the route table', () => {
    const routes = projectRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(16);
    const size = routes.length * 2 * 3;
    console.log(`isolation matrix: ${routes.length} project routes × 2 credentials × 3 targets = ${size} requests`);
  });

  it('every cell answers as expected and never leaks the other tenant', async () => {
    const a = tenants.a;
    const b = tenants.b;
    const failures: string[] = [];
    let cells = 0;
    for (const route of projectRoutes()) {
      for (const caller of ['api_key', 'jwt'] as Caller[]) {
        for (const target of ['own', 'other', 'missing'] as Target[]) {
          const project = target === 'own' ? a.project : target === 'other' ? b.project : `no-such-${crypto.randomUUID().slice(0, 8)}`;
          const path = route.path
            .replace(':project_id', project)
            .replace(/:(\w+)/g, (_m, name: string) => B_PARAMS[name]?.() ?? `b-${name}`);
          const headers: Record<string, string> = caller === 'api_key' ? { 'X-API-Key': a.key } : { Authorization: `Bearer ${a.jwt}` };
          let body: string | undefined;
          if (route.body) {
            headers['Content-Type'] = 'application/json';
            body = JSON.stringify(SAMPLE_BODIES[route.body] ?? {});
          }
          const res = await fetch(`${svc.url}${path}`, { method: route.method, headers, body });
          const text = await res.text();
          cells++;
          const cell = `${route.method} ${route.path} as ${caller} on ${target}: ${res.status} ${text.slice(0, 120)}`;
          if (expectedDenied(route, caller, target)) {
            if (res.status !== 403) failures.push(`expected 403 — ${cell}`);
            else if (JSON.parse(text).detail !== 'Forbidden - User does not have access to this resource')
              failures.push(`403 text — ${cell}`);
          } else if (res.status === 401 || res.status === 403 || res.status >= 500) {
            failures.push(`expected access — ${cell}`);
          }
          if (text.includes(canary.b) || text.includes(b.keyId) || text.includes(b.key.slice(0, 11))) {
            failures.push(`leak of tenant B — ${cell}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(cells).toBe(projectRoutes().length * 6);
    // B's objects survived every attempt on them from A
    expect((await getJson(`${svc.url}/api/me/context`, { headers: { 'X-API-Key': b.key } })).status).toBe(200);
    const bp = await getJson(`${svc.url}/api/projects/tenant-b/prompts/canary-prompt`, { headers: { Authorization: `Bearer ${b.jwt}` } });
    expect(bp.body).toMatchObject({ latest_version: 1, archived_at: null, labels: { production: 1 } });
    const bRun = await getJson(`${svc.url}/api/projects/tenant-b/datasets/${b.datasetId}/runs/${b.runId}`, {
      headers: { Authorization: `Bearer ${b.jwt}` },
    });
    expect(bRun.body).toMatchObject({ name: 'canary-run', totals: { dataset_items: 1, items: { linked: 1 } } });
    expect(bRun.body.items[0]).toMatchObject({ item_id: b.itemId, item_version: 1, input: canary.b, trace_id: 'canary-trace' });
  });

  it("A's context names only A's projects", async () => {
    for (const headers of [{ 'X-API-Key': tenants.a.key }, { Authorization: `Bearer ${tenants.a.jwt}` }] as Array<Record<string, string>>) {
      const r = await getJson(`${svc.url}/api/me/context`, { headers });
      expect(r.status).toBe(200);
      expect(r.body.projects.map((p: { project_id: string }) => p.project_id)).toEqual(['tenant-a']);
      expect(JSON.stringify(r.body)).not.toContain('tenant-b');
    }
  });
});
