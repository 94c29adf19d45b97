// Prompt reads and writes: the cost of a read by label/latest from the cache (server time, in
// process) and uncached, end-to-end HTTP reads, and version-write throughput.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from './fresh-database.ts';
import { quantile, timeEach } from './timing.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createPromptCache } from '../src/prompts/cache.ts';
import { parseVersionRef } from '../src/prompts/prompt-input.ts';
import { createPromptService } from '../src/prompts/service.ts';
import { createBroadcast } from '../src/stores/broadcast.ts';

export interface Row {
  what: string;
  n: number;
  p50Us: number;
  p99Us: number;
  perSecond?: number;
}

function stats(what: string, samples: number[], wallMs?: number): Row {
  const us = (q: number) => Math.round(quantile(samples, q) * 1000);
  return {
    what,
    n: samples.length,
    p50Us: us(0.5),
    p99Us: us(0.99),
    perSecond: wallMs ? Math.round((samples.length / wallMs) * 1000) : undefined,
  };
}

export async function benchPrompts(env: Record<string, string> = {}): Promise<Row[]> {
  const db = env.DATABASE_URL ? await freshDatabase(env.DATABASE_URL) : undefined;
  if (db) env = { ...env, DATABASE_URL: db.url };
  try {
    return await run(env);
  } finally {
    await db?.drop();
  }
}

async function run(env: Record<string, string>): Promise<Row[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-prompts-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', OTLP_GRPC_PORT: '0', AUTH_REQUIRED: 'false', LOG_LEVEL: 'silent', ...env });
  const logger = createLogger({ logLevel: 'silent' });
  const svc = await startService(config, { logger });
  const rows: Row[] = [];
  try {
    const broadcast = createBroadcast(svc.stores.redis, logger);
    const prompts = createPromptService(svc.stores.postgres, createPromptCache(broadcast));
    const uncached = createPromptService(svc.stores.postgres, {
      get: () => undefined,
      generation: () => 0,
      set: () => undefined,
      invalidate: async () => undefined,
    });
    const P = 'default';
    await prompts.create(
      P,
      {
        prompt_id: 'agent-system',
        type: 'chat',
        template: [
          { role: 'system', content: 'You are {{persona}}. Answer about {{topic}}.' },
          { role: 'user', content: '{{question}}' },
        ],
        labels: ['production'],
        config: { temperature: 0.2 },
      },
      { userId: 'bench', apiKeyId: null },
    );
    const production = parseVersionRef('production');
    const latest = parseVersionRef('latest');
    await prompts.version(P, 'agent-system', production);
    rows.push(
      stats('read by label, cached (in process)', (await timeEach(20_000, () => prompts.version(P, 'agent-system', production))).samples),
    );
    rows.push(
      stats('read by latest, cached (in process)', (await timeEach(20_000, () => prompts.version(P, 'agent-system', latest))).samples),
    );
    rows.push(
      stats('read by label, uncached (PostgreSQL)', (await timeEach(2_000, () => uncached.version(P, 'agent-system', production))).samples),
    );
    const inputs = { persona: 'a helpful agent', topic: 'billing', question: 'Why was I charged twice?' };
    rows.push(
      stats(
        'render by label, cached (in process)',
        (await timeEach(20_000, () => prompts.render(P, 'agent-system', production, inputs))).samples,
      ),
    );
    const url = `${svc.url}/api/projects/${P}/prompts/agent-system/versions/production`;
    rows.push(stats('HTTP GET version by label (cached)', (await timeEach(2_000, () => fetch(url).then((r) => r.text()))).samples));
    const w = await timeEach(500, (i) =>
      prompts.addVersion(
        P,
        'agent-system',
        { template: [{ role: 'system', content: `v${i} {{persona}}` }] },
        { userId: 'bench', apiKeyId: null },
      ),
    );
    rows.push(stats('new version (transaction, sequential)', w.samples, w.wallMs));
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, (_, c) =>
        (async () => {
          for (let i = 0; i < 50; i++)
            await prompts.addVersion(
              P,
              'agent-system',
              { template: [{ role: 'system', content: `c${c} ${i}` }] },
              { userId: 'bench', apiKeyId: null },
            );
        })(),
      ),
    );
    const wall = performance.now() - start;
    rows.push({
      what: 'new versions, 8 concurrent writers on one prompt',
      n: 400,
      p50Us: 0,
      p99Us: 0,
      perSecond: Math.round((400 / wall) * 1000),
    });
    broadcast.close();
  } finally {
    await svc.close();
  }
  return rows;
}
