// Timing helpers shared by the benchmark scripts.
import { spawn } from 'node:child_process';

/** Runs `fn` n times in sequence; returns each run's duration (ms) and the wall time. */
export async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<{ samples: number[]; wallMs: number }> {
  const samples: number[] = [];
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  return { samples, wallMs: performance.now() - start };
}

/** The q-quantile (0..1) of samples. */
export function quantile(samples: readonly number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** Checks `done` every `everyMs` until it holds (true) or `ms` have passed (false). */
export async function waitUntil(done: () => boolean | Promise<boolean>, ms: number, everyMs = 100): Promise<boolean> {
  const by = performance.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (performance.now() >= by) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A count as the figures print it: rounded, with thousands separators. */
export const formatCount = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Runs a bench script (`node --import tsx <script> <args>`) in its own process; resolves with the JSON of its last stdout line. */
export function runJsonChild<T>(script: string, args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as T) : reject(new Error(`${script} exited with ${code}`)),
    );
  });
}
