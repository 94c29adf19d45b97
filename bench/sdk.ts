// The SDKs' prompt read: the cost of a cached get (TypeScript in this process, Python in a child
// python3) and how long a get of an uncached prompt takes when the service is down, stopped
// (connection refused) or hung (accepts, never answers): never longer than the configured
// timeout, retries included. Embedded stores.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Traceloom } from '../sdk/js/src/index.ts';
import { startEmbeddedService, type Figure } from './executions.ts';
import { quantile } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

const TIMEOUT_MS = Number(process.env.BENCH_SDK_TIMEOUT_MS ?? 500);
const CACHED_GETS = Number(process.env.BENCH_SDK_GETS ?? 200_000);
const DOWN_GETS = Number(process.env.BENCH_SDK_DOWN_GETS ?? 5);

const us = (samplesMs: number[], q: number) => (quantile(samplesMs, q) * 1000).toFixed(2);

async function cachedGets(baseUrl: string): Promise<Figure[]> {
  const client = new Traceloom({ baseUrl, projectId: 'default', timeoutMs: TIMEOUT_MS });
  await client.prompts.get('bench-sdk');
  const samples = new Array<number>(CACHED_GETS);
  for (let i = 0; i < CACHED_GETS; i++) {
    const t = performance.now();
    await client.prompts.get('bench-sdk');
    samples[i] = performance.now() - t;
  }
  return [
    {
      what: `TypeScript cached get, ${CACHED_GETS.toLocaleString('en-US')} gets: p50 / p99 (µs)`,
      value: `${us(samples, 0.5)} / ${us(samples, 0.99)}`,
    },
  ];
}

/** In a child python3, run asynchronously: the service answering its first get lives in this process. */
async function pythonCachedGets(baseUrl: string): Promise<Figure[]> {
  const script = `
import sys, time
sys.path.insert(0, ${JSON.stringify(path.resolve(import.meta.dirname, '../sdk/python'))})
from traceloom import Traceloom
c = Traceloom(base_url=${JSON.stringify(baseUrl)}, project_id="default")
c.prompts.get("bench-sdk")
n = ${Math.min(CACHED_GETS, 100_000)}
s = []
for _ in range(n):
    t = time.perf_counter_ns(); c.prompts.get("bench-sdk"); s.append(time.perf_counter_ns() - t)
s.sort()
print(f"{s[n // 2] / 1000:.2f} / {s[min(n - 1, int(n * 0.99))] / 1000:.2f}")
`;
  try {
    const out = (await promisify(execFile)('python3', ['-c', script], { encoding: 'utf8' })).stdout.trim();
    return [{ what: `Python cached get, ${Math.min(CACHED_GETS, 100_000).toLocaleString('en-US')} gets: p50 / p99 (µs)`, value: out }];
  } catch (err) {
    return [{ what: 'Python cached get', value: `not measured: ${(err as Error).message.split('\n')[0]}` }];
  }
}

async function downGets(what: string, baseUrl: string): Promise<Figure> {
  const samples: number[] = [];
  for (let i = 0; i < DOWN_GETS; i++) {
    const client = new Traceloom({ baseUrl, projectId: 'default', timeoutMs: TIMEOUT_MS, retries: 3 });
    const t = performance.now();
    const p = await client.prompts.get('bench-sdk', { fallback: 'fallback text' });
    samples.push(performance.now() - t);
    if (!p.isFallback) throw new Error(`${what}: expected the fallback`);
  }
  const worst = Math.max(...samples);
  return {
    what: `${what}: uncached get with a fallback, ${DOWN_GETS} gets, timeout ${TIMEOUT_MS} ms, 3 retries: max (ms)`,
    value: `${worst.toFixed(1)}${worst > TIMEOUT_MS ? ' — OVER THE TIMEOUT' : ''}`,
  };
}

export async function benchSdk(): Promise<Figure[]> {
  const { svc, dir } = await startEmbeddedService('traceloom-bench-sdk-');
  const figures: Figure[] = [];
  const hung = http.createServer(() => {}); // accepts, never answers
  try {
    const created = await fetch(`${svc.url}/api/projects/default/prompts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt_id: 'bench-sdk', type: 'text', template: 'Hello {{name}}' }),
    });
    if (created.status !== 201) throw new Error(`prompt not created: ${created.status}`);
    figures.push(...(await cachedGets(svc.url)), ...(await pythonCachedGets(svc.url)));
    const url = svc.url;
    await svc.close();
    figures.push(await downGets('service stopped (connection refused)', url));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    figures.push(await downGets('service hung (never answers)', `http://127.0.0.1:${(hung.address() as AddressInfo).port}`));
  } finally {
    hung.closeAllConnections();
    hung.close();
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}
