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

/**
 * ClickHouse errors of a server in trouble rather than of the data sent: out of space, read-only,
 * overloaded, timed out, a replica or Keeper unreachable. An insert that fails so is tried again as
 * it is; any other failure, while the store answers, is the data's (span-loader.ts isolates it).
 */
const TRANSIENT_CLICKHOUSE_CODES = new Set([
  159, // TIMEOUT_EXCEEDED
  164, // READONLY
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  242, // TABLE_IS_READ_ONLY
  243, // NOT_ENOUGH_SPACE
  279, // ALL_CONNECTION_TRIES_FAILED
  425, // SYSTEM_ERROR
  999, // KEEPER_EXCEPTION
]);

/** The ClickHouse error code of an error (chDB's and the HTTP client's alike), or undefined. */
function clickhouseCode(err: Error): number | undefined {
  const e = err as { clickhouseCode?: unknown; code?: unknown };
  if (typeof e.clickhouseCode === 'number') return e.clickhouseCode;
  if (typeof e.code === 'string' && /^\d+$/.test(e.code)) return Number(e.code);
  const m = /\bCode: (\d+)\./.exec(err.message);
  return m ? Number(m[1]) : undefined;
}

/** True for a failure that says a store is in trouble (retry the same work later), not that the work is wrong. */
export function isTransientStoreError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof StoreUnavailableError || isConnectivityError(err)) return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EROFS' || code === 'EIO') return true;
  // PostgreSQL: insufficient resources (53: disk full, out of memory), operator intervention (57),
  // a read-only transaction (25006), serialization failures and deadlocks (40).
  if (typeof code === 'string' && (/^(53|57|40)[0-9A-Z]{3}$/.test(code) || code === '25006')) return true;
  // Redis: loading, read-only replica, out of memory, busy, failing over.
  if (/^(LOADING|READONLY|OOM|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|MISCONF)\b/.test(err.message)) return true;
  const ch = clickhouseCode(err);
  if (ch === undefined) return false;
  // TOO_MANY_PARTS is back-pressure ("Too many parts ... merges are slower than inserts"), except
  // for a block that spans too many partitions: that is the block's own doing.
  if (ch === 252) return !/partitions/i.test(err.message);
  return TRANSIENT_CLICKHOUSE_CODES.has(ch);
}
