// Boot time and idle memory of the API process, in each store mode.
// Spawns `npm start`'s entry point, polls /api/health until 200, then samples RSS at idle.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from './fresh-database.ts';

export interface BootFigures {
  mode: string;
  bootMs: number;
  idleRssMiB: number;
  healthP50Ms: number;
}

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function measureBoot(mode: string, env: Record<string, string>, dataDir: string): Promise<BootFigures> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, ...env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', AUTH_REQUIRED: 'false' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}/api/health`;
  let bootMs = -1;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${mode}: the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) {
        bootMs = performance.now() - started;
        break;
      }
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error(`${mode}: no healthy API within 60 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const latencies: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await (await fetch(url)).text();
    latencies.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  await new Promise((r) => setTimeout(r, 3_000)); // idle
  const idleRssMiB = rssMiB(child.pid!);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { mode, bootMs: Math.round(bootMs), idleRssMiB, healthP50Ms: Number(latencies[100]!.toFixed(2)) };
}

export async function benchBoot(): Promise<BootFigures[]> {
  const figures: BootFigures[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-boot-'));
  const embedded = { DATABASE_URL: '', REDIS_URL: '', CLICKHOUSE_URL: '' };
  figures.push(await measureBoot('embedded, first start (creates the stores)', embedded, dir));
  figures.push(await measureBoot('embedded, restart on existing DATA_DIR', embedded, dir));
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  try {
    const db = await freshDatabase(databaseUrl);
    try {
      figures.push(
        await measureBoot(
          'servers (PostgreSQL + Redis; ClickHouse chDB)',
          { DATABASE_URL: db.url, REDIS_URL: redisUrl, REDIS_PREFIX: 'tlbench', CLICKHOUSE_URL: '' },
          fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-srv-')),
        ),
      );
    } finally {
      await db.drop();
    }
  } catch (err) {
    process.stderr.write(`server mode not measured: ${(err as Error).message}\n`);
  }
  return figures;
}
