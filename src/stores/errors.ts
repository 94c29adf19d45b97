// Errors that mean "a store cannot serve now", as opposed to a bug in a query: it cannot be
// reached, or it refuses writes (a full disk, no memory, too many connections, read-only). They
// become 503 with Retry-After at the HTTP edge, naming the store and the reason.

export type StoreName = 'clickhouse' | 'postgres' | 'redis';
/** What can refuse a write: a store, or a file of our own (the ingest log). */
export type Writer = StoreName | 'ingest_log';

/** Why a store that answers still refuses work. */
export type WriteRefusal = 'disk_full' | 'out_of_memory' | 'too_many_connections' | 'read_only' | 'out_of_resources';

const WRITER_NAME: Record<Writer, string> = {
  clickhouse: 'clickhouse',
  postgres: 'postgres',
  redis: 'redis',
  ingest_log: 'the ingest log',
};
const REFUSAL_TEXT: Record<WriteRefusal, string> = {
  disk_full: 'is out of disk space',
  out_of_memory: 'is out of memory',
  too_many_connections: 'has too many connections',
  read_only: 'is read-only',
  out_of_resources: 'is out of resources',
};

/** "postgres is out of disk space", "the ingest log is read-only": the public words for a refusal. */
export const refusalText = (writer: Writer, reason: WriteRefusal): string => `${WRITER_NAME[writer]} ${REFUSAL_TEXT[reason]}`;

export class StoreUnavailableError extends Error {
  constructor(
    readonly store: StoreName,
    override readonly cause?: unknown,
    /** undefined: the store could not be reached (or timed out); otherwise why it refused. */
    readonly refusal: WriteRefusal | undefined = refusalOf(cause),
  ) {
    super(`${refusal ? refusalText(store, refusal) : `${store} is unavailable`}${cause instanceof Error ? `: ${cause.message}` : ''}`);
    this.name = 'StoreUnavailableError';
  }

  /** The public sentence (`detail` of the 503). */
  get detail(): string {
    return `${this.refusal ? refusalText(this.store, this.refusal) : `${this.store} is unavailable`}; retry later`;
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

// PostgreSQL SQLSTATE (class 53: insufficient resources; 25006: read-only transaction).
const PG_REFUSALS: Record<string, WriteRefusal> = {
  '53100': 'disk_full',
  '53200': 'out_of_memory',
  '53300': 'too_many_connections',
  '25006': 'read_only',
};
// ClickHouse error codes (src/Common/ErrorCodes.cpp).
const CH_REFUSALS: Record<string, WriteRefusal> = {
  '243': 'disk_full', // NOT_ENOUGH_SPACE
  '241': 'out_of_memory', // MEMORY_LIMIT_EXCEEDED
  '173': 'out_of_memory', // CANNOT_ALLOCATE_MEMORY
  '202': 'too_many_connections', // TOO_MANY_SIMULTANEOUS_QUERIES
  '164': 'read_only', // READONLY
  '242': 'read_only', // TABLE_IS_READ_ONLY
};
// Our own files (node:fs), and what a store reports in words when it wraps an errno.
const ERRNO_REFUSALS: Record<string, WriteRefusal> = {
  ENOSPC: 'disk_full',
  EDQUOT: 'disk_full',
  EROFS: 'read_only',
  ENOMEM: 'out_of_memory',
};
const MESSAGE_REFUSALS: Array<[RegExp, WriteRefusal]> = [
  [/No space left on device|Disk quota exceeded|ENOSPC|EDQUOT/, 'disk_full'],
  [/Read-only file system|EROFS/, 'read_only'],
  // Redis: maxmemory reached; a failed snapshot (often a full disk) stops writes; a replica.
  [/^OOM command not allowed/, 'out_of_memory'],
  [/^MISCONF /, 'disk_full'],
  [/^READONLY /, 'read_only'],
];

/** Why a store (or our own file) refused the work, or undefined when the error says nothing of the kind. */
export function refusalOf(err: unknown): WriteRefusal | undefined {
  if (!(err instanceof Error)) return undefined;
  if (err instanceof StoreUnavailableError) return err.refusal;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    // A PostgreSQL SQLSTATE is five characters; ClickHouse's client gives its numeric code as a string.
    if (PG_REFUSALS[code]) return PG_REFUSALS[code];
    if (/^53[0-9A-Z]{3}$/.test(code)) return 'out_of_resources';
    if (CH_REFUSALS[code]) return CH_REFUSALS[code];
    if (ERRNO_REFUSALS[code]) return ERRNO_REFUSALS[code];
  }
  // The embedded engine (chDB) reports "Code: 243. DB::Exception: ..." in its message only.
  const ch = /\bCode: (\d+)\. DB::Exception/.exec(err.message);
  if (ch && CH_REFUSALS[ch[1]!]) return CH_REFUSALS[ch[1]!];
  for (const [re, reason] of MESSAGE_REFUSALS) if (re.test(err.message)) return reason;
  return undefined;
}

/** True for failures of reaching a store (network, timeouts, server shutting down), not for query errors. */
export function isConnectivityError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // PostgreSQL SQLSTATE class 08 (connection exception), 57P01..57P03 (shutdown, cannot connect now)
    if (/^08/.test(code) || /^57P0[1-3]$/.test(code)) return true;
  }
  return /timeout|terminated|Connection is closed|connect ECONNREFUSED|socket hang up|Client was closed|Cannot use a pool after calling end/i.test(
    err.message,
  );
}

/** Wrap a connectivity failure or a refusal so the error renderer can answer 503 naming the store (and why). */
export function asStoreError(store: StoreName, err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  return isConnectivityError(err) || refusalOf(err) ? new StoreUnavailableError(store, err) : err;
}

/**
 * Besides refusals (refusalOf), ClickHouse errors of a server in trouble rather than of the data
 * sent: timed out, the network, a replica or Keeper unreachable. An insert that fails so is tried
 * again as it is; any other failure, while the store answers, is the data's (span-loader.ts
 * isolates it).
 */
const TRANSIENT_CLICKHOUSE_CODES = new Set([
  159, // TIMEOUT_EXCEEDED
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
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
  if (err instanceof StoreUnavailableError || isConnectivityError(err) || refusalOf(err)) return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EIO') return true;
  // PostgreSQL: operator intervention (57), serialization failures and deadlocks (40).
  if (typeof code === 'string' && /^(57|40)[0-9A-Z]{3}$/.test(code)) return true;
  // Redis: loading, busy, failing over.
  if (/^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/.test(err.message)) return true;
  const ch = clickhouseCode(err);
  if (ch === undefined) return false;
  // TOO_MANY_PARTS is back-pressure ("Too many parts ... merges are slower than inserts"), except
  // for a block that spans too many partitions: that is the block's own doing.
  if (ch === 252) return !/partitions/i.test(err.message);
  return TRANSIENT_CLICKHOUSE_CODES.has(ch);
}
