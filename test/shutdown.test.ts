// SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the stores, exit 0.
// A second signal forces the exit.
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '../src/http/routes/types.ts';
import { dropTestDatabases, mode, testEnv } from './helpers/env.ts';
import { getJson, startTestService } from './helpers/service.ts';
import { startChild } from './helpers/child.ts';

afterAll(() => dropTestDatabases());

const slowRoute = (): RouteDef[] => [
  {
    method: 'GET',
    path: '/api/test/slow',
    operationId: 'slow',
    summary: 'slow',
    tag: 'test',
    access: 'public',
    responses: { 200: { description: 'ok' } },
    async handler(ctx) {
      await new Promise((r) => setTimeout(r, 600));
      ctx.body = { done: true };
    },
  },
];

describe(`graceful shutdown (${mode} mode)`, () => {
  it('lets an in-flight request finish, then refuses connections and closes the stores', async () => {
    const svc = await startTestService({}, { extraRoutes: slowRoute });
    const inflight = getJson(`${svc.url}/api/test/slow`);
    await new Promise((r) => setTimeout(r, 100));
    const closing = svc.close();
    const r = await inflight;
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ done: true });
    await closing;
    await expect(fetch(`${svc.url}/api/health`)).rejects.toThrow();
    await expect(svc.stores.postgres.query('SELECT 1')).rejects.toThrow();
  });

  it('SIGTERM stops the process cleanly (exit 0) after draining', async () => {
    const t = await testEnv();
    const { child, url, logs, exited } = await startChild(t.env);
    expect((await getJson(`${url}/api/health`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logs()).toContain('shutdown complete');
  });

  it('a second signal forces the exit while a request is still in flight', async () => {
    const t = await testEnv({ SHUTDOWN_TIMEOUT_MS: '60000' });
    const { child, url, logs, exited } = await startChild(t.env);
    // A request whose headers never finish keeps the connection busy: the drain cannot end.
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(child.exitCode).toBeNull(); // still draining
    child.kill('SIGTERM');
    expect(await exited).toBe(130);
    expect(logs()).toContain('second signal');
    socket.destroy();
  });
});
