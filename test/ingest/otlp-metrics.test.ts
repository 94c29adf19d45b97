// POST /api/v1/metrics with the real OpenTelemetry metrics SDK and OTLP exporters (protobuf and
// JSON): the export succeeds (a clean OTLP success, so SDKs that send every signal stop erroring),
// nothing is stored, and the data points are counted as ignored. Not a metrics request: 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { metering } from '../helpers/otel-signals.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

async function ignoredSoFar(): Promise<number> {
  const text = await (await fetch(`${svc.url}/metrics`)).text();
  const m = /^traceloom_ingest_metric_points_ignored_total\{[^}]*\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('OTLP metrics are accepted and ignored', () => {
  for (const protocol of ['proto', 'json'] as const) {
    it(`the ${protocol} exporter's export succeeds and its points are counted`, async () => {
      const before = await ignoredSoFar();
      const m = metering(svc.url, { protocol });
      const meter = m.provider.getMeter('app');
      meter.createCounter('requests').add(3, { route: '/a' });
      meter.createCounter('requests_b').add(1);
      meter.createHistogram('latency').record(12.5);
      meter.createUpDownCounter('queue').add(-2);
      await m.flush(); // rejects when the service answers anything but a success
      expect(await ignoredSoFar()).toBe(before + 4);
      await m.shutdown(); // exports once more (cumulative points), and succeeds too
      expect(await ignoredSoFar()).toBe(before + 8);
    });
  }

  it('answers a JSON count, an empty protobuf message, and 400 to what is not a metrics request', async () => {
    const body = {
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                { name: 'x', sum: { dataPoints: [{ asInt: '1' }, { asInt: '2' }] } },
                { name: 'y', gauge: { dataPoints: [{ asDouble: 1 }] } },
              ],
            },
          ],
        },
      ],
    };
    const r = await getJson(`${svc.url}/api/v1/metrics`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(r).toMatchObject({ status: 200, body: { data_points_ignored: 3 } });
    const empty = await fetch(`${svc.url}/api/v1/metrics`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: new Uint8Array(0),
    });
    expect(empty.status).toBe(200);
    expect((await empty.arrayBuffer()).byteLength).toBe(0);
    const bad = await getJson(`${svc.url}/api/v1/metrics`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ resourceSpans: [] }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/ExportMetricsServiceRequest/);
    const truncated = await getJson(`${svc.url}/api/v1/metrics`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: new Uint8Array([0x0a, 0x10, 0x12]),
    });
    expect(truncated.status).toBe(400);
    expect(truncated.body.detail).toMatch(/not a valid OTLP ExportMetricsServiceRequest/);
  });
});
