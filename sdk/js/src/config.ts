// Client options, from the constructor or the environment (TRACELOOM_BASE_URL, TRACELOOM_API_KEY,
// TRACELOOM_PROJECT_ID), with their defaults. The environment is read only where there is one
// (Node, Deno, Bun); in a browser pass the options.
import { TraceloomError } from './errors.ts';

export interface TraceloomOptions {
  /** e.g. https://traceloom.example.com (default: TRACELOOM_BASE_URL). */
  baseUrl?: string;
  /** A project API key (default: TRACELOOM_API_KEY). Sent as X-API-Key. */
  apiKey?: string;
  /** The project; default TRACELOOM_PROJECT_ID, else the API key's project (read once from /api/me/context). */
  projectId?: string;
  /** Per attempt, in milliseconds (default 2000). */
  timeoutMs?: number;
  /** Attempts after the first on a network error, timeout, 429 or 5xx (default 2). */
  retries?: number;
  /** First retry delay before jitter, doubled each retry up to maxBackoffMs (default 100). */
  backoffMs?: number;
  /** Cap of a retry delay (default 2000). */
  maxBackoffMs?: number;
  /** Default prompt cache TTL in seconds (default 60). */
  cacheTtlSeconds?: number;
  /** Budget check cache TTL in seconds (default 5). */
  budgetCacheTtlSeconds?: number;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** The clock in milliseconds (default Date.now); tests move it to expire caches. */
  now?: () => number;
  /** Called with errors of background work (cache refreshes), which never reach the caller. */
  onBackgroundError?: (error: unknown) => void;
}

export interface ResolvedOptions {
  baseUrl: string;
  apiKey: string | undefined;
  projectId: string | undefined;
  timeoutMs: number;
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
  cacheTtlSeconds: number;
  budgetCacheTtlSeconds: number;
  fetch: typeof fetch;
  now: () => number;
  onBackgroundError: (error: unknown) => void;
}

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const v = proc?.env?.[name];
  return v === undefined || v === '' ? undefined : v;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new TraceloomError(`${name}: must be a finite number >= 0, got ${value}`);
  return value;
}

export function resolveOptions(o: TraceloomOptions = {}): ResolvedOptions {
  const baseUrl = o.baseUrl ?? env('TRACELOOM_BASE_URL');
  if (!baseUrl) throw new TraceloomError('baseUrl: pass it in the options or set TRACELOOM_BASE_URL');
  const f = o.fetch ?? globalThis.fetch;
  if (typeof f !== 'function') throw new TraceloomError('fetch: this runtime has none; pass one in the options');
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey: o.apiKey ?? env('TRACELOOM_API_KEY'),
    projectId: o.projectId ?? env('TRACELOOM_PROJECT_ID'),
    timeoutMs: nonNegative('timeoutMs', o.timeoutMs ?? 2000),
    retries: Math.floor(nonNegative('retries', o.retries ?? 2)),
    backoffMs: nonNegative('backoffMs', o.backoffMs ?? 100),
    maxBackoffMs: nonNegative('maxBackoffMs', o.maxBackoffMs ?? 2000),
    cacheTtlSeconds: nonNegative('cacheTtlSeconds', o.cacheTtlSeconds ?? 60),
    budgetCacheTtlSeconds: nonNegative('budgetCacheTtlSeconds', o.budgetCacheTtlSeconds ?? 5),
    fetch: f.bind(globalThis),
    now: o.now ?? Date.now,
    onBackgroundError: o.onBackgroundError ?? (() => {}),
  };
}
