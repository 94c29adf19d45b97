import { afterAll, beforeAll, expect } from 'vitest';
import { createLogger, type Logger } from '../../src/logger.ts';
import { startService, type Service } from '../../src/service.ts';
import type { AppDeps } from '../../src/http/app.ts';
import { dropTestDatabases, testEnv, type TestEnv } from './env.ts';

export interface TestService extends Service {
  testEnv: TestEnv;
}

export async function startTestService(
  overrides: Record<string, string | undefined> = {},
  opts: { extraRoutes?: AppDeps['extraRoutes']; validator?: AppDeps['validator']; env?: TestEnv; logger?: Logger } = {},
): Promise<TestService> {
  const t = opts.env ?? (await testEnv(overrides));
  const service = await startService(t.config, {
    logger: opts.logger ?? createLogger({ logLevel: 'silent' }),
    extraRoutes: opts.extraRoutes,
    validator: opts.validator,
  });
  return Object.assign(service, { testEnv: t });
}

export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: returned as text
  }
  return { status: res.status, headers: res.headers, body };
}

/** The body of GET /api/health when all is well, in the current mode, with DISK_MIN_FREE_BYTES at its default. */
/** JSON calls under one base path (`<service>/api/projects/<id>`): method, path, optional body. */
export function jsonCaller(base: () => string, headers: Record<string, string> = {}) {
  return (method: string, path: string, body?: unknown) =>
    getJson(`${base()}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
}

export function healthyBody(mode: 'embedded' | 'server') {
  return {
    status: 'ok',
    clickhouse: 'ok',
    postgres: 'ok',
    redis: mode === 'server' ? 'ok' : 'disabled',
    refusing_writes: [],
    data_dir: { free_bytes: expect.any(Number), total_bytes: expect.any(Number), min_free_bytes: 256 * 1024 * 1024 },
  };
}

/** One service for the whole test file: started before its tests, closed (and its databases dropped) after them. */
export function serviceForFile(overrides: Record<string, string | undefined> = {}): () => TestService {
  let svc: TestService | undefined;
  beforeAll(async () => {
    svc = await startTestService(overrides);
  });
  afterAll(async () => {
    await svc?.close();
    await dropTestDatabases();
  });
  return () => svc!;
}
