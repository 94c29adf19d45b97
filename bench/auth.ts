// Cost of authenticating a request: API key and JWT, cached and uncached, measured on the
// identity module itself (no HTTP) and end to end over loopback HTTP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createApiKey } from '../src/auth/api-key-repository.ts';
import { ensureProject } from '../src/auth/project-repository.ts';
import { TestIdp } from '../test/helpers/idp.ts';
import { quantile, timeEach } from './timing.ts';

export interface AuthFigure {
  what: string;
  n: number;
  p50Us: number;
  p99Us: number;
}

function stats(what: string, samples: number[]): AuthFigure {
  return { what, n: samples.length, p50Us: Math.round(quantile(samples, 0.5) * 1000), p99Us: Math.round(quantile(samples, 0.99) * 1000) };
}

const time = async (n: number, fn: (i: number) => Promise<unknown>) => (await timeEach(n, fn)).samples;

export async function benchAuth(): Promise<AuthFigure[]> {
  const idp = await new TestIdp().start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-auth-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', OTLP_GRPC_PORT: '0', AUTH_REQUIRED: 'true', LOG_LEVEL: 'silent', ...idp.env() });
  const svc = await startService(config, { logger: createLogger({ logLevel: 'silent' }) });
  const figures: AuthFigure[] = [];
  try {
    await ensureProject(svc.stores.postgres, 'bench');
    const N = 500;
    const keys: string[] = [];
    for (let i = 0; i < N; i++)
      keys.push(
        (
          await createApiKey(svc.stores.postgres, {
            projectId: 'bench',
            name: `k${i}`,
            expiresInDays: 30,
            scope: 'full',
            role: 'member',
            createdBy: null,
          })
        ).key,
      );
    const auth = (c: { apiKey?: string; authorization?: string }) => svc.identity.authenticate(c);
    figures.push(stats('API key, uncached (SHA-256 + PostgreSQL lookup)', await time(N, (i) => auth({ apiKey: keys[i]! }))));
    figures.push(stats('API key, cached', await time(5_000, (i) => auth({ apiKey: keys[i % N]! }))));
    const tokens: string[] = [];
    for (let i = 0; i < N; i++) tokens.push(await idp.token({ sub: `u${i % 10}`, project_id: 'bench', jti: String(i) }));
    await auth({ authorization: `Bearer ${tokens[0]}` }); // JWKS fetched once
    figures.push(
      stats('JWT RS256, uncached (signature + claims)', await time(N - 1, (i) => auth({ authorization: `Bearer ${tokens[i + 1]}` }))),
    );
    figures.push(stats('JWT, cached', await time(5_000, (i) => auth({ authorization: `Bearer ${tokens[i % N]}` }))));
    const url = `${svc.url}/api/me/context`;
    const health = await time(1_000, () => fetch(`${svc.url}/api/health`).then((r) => r.text()));
    figures.push(stats('HTTP GET /api/health (no auth; pings 3 stores)', health));
    figures.push(
      stats(
        'HTTP GET /api/me/context, API key (cached)',
        await time(1_000, (i) => fetch(url, { headers: { 'X-API-Key': keys[i % N]! } }).then((r) => r.text())),
      ),
    );
    figures.push(
      stats(
        'HTTP GET /api/me/context, JWT (cached)',
        await time(1_000, (i) => fetch(url, { headers: { Authorization: `Bearer ${tokens[i % N]}` } }).then((r) => r.text())),
      ),
    );
  } finally {
    await svc.close();
    await idp.stop();
  }
  return figures;
}
