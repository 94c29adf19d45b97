// Errors that mean "a store cannot be reached", as opposed to a bug in a query.
// They become 503 with Retry-After at the HTTP edge, and name the store.

export type StoreName = 'clickhouse' | 'postgres' | 'redis';

export class StoreUnavailableError extends Error {
  constructor(
    readonly store: StoreName,
    override readonly cause?: unknown,
  ) {
    super(`${store} is unavailable${cause instanceof Error ? `: ${cause.message}` : ''}`);
    this.name = 'StoreUnavailableError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/** True for failures of reaching a store (network, timeouts, server shutting down), not for query errors. */
export function isConnectivityError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // PostgreSQL SQLSTATE class 08 (connection exception), 57P01..57P03 (shutdown, cannot connect now), 53300 (too many connections)
    if (/^08/.test(code) || /^57P0[1-3]$/.test(code) || code === '53300') return true;
  }
  return /timeout|terminated|Connection is closed|connect ECONNREFUSED|socket hang up|Client was closed|Cannot use a pool after calling end/i.test(
    err.message,
  );
}

/** Wrap a connectivity failure so the error renderer can answer 503 naming the store. */
export function asStoreError(store: StoreName, err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  return isConnectivityError(err) ? new StoreUnavailableError(store, err) : err;
}
