// The one place store failures become HTTP: a store that refuses writes (a full disk, no memory,
// too many connections, read-only) answers 503 + Retry-After naming the store and the reason,
// whatever the store reports it with: a PostgreSQL SQLSTATE, a ClickHouse error code (from the
// HTTP client, parsed by the client's own parser, or in chDB's message), an errno of our files.
import { DatabaseError } from 'pg';
import { parseError } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import { toHttpError } from '../../src/http/errors.ts';
import { asStoreError, refusalOf } from '../../src/stores/errors.ts';
import { WriteRefusals } from '../../src/stores/write-refusals.ts';

const pgError = (code: string, message: string) => Object.assign(new DatabaseError(message, 0, 'error'), { code });
const errno = (code: string) => Object.assign(new Error(`${code}: failed, write`), { code });

describe('store errors', () => {
  it.each([
    [pgError('53100', 'could not extend file "base/5/16385": No space left on device'), 'postgres', 'postgres is out of disk space'],
    [pgError('53200', 'out of memory'), 'postgres', 'postgres is out of memory'],
    [pgError('53300', 'sorry, too many clients already'), 'postgres', 'postgres has too many connections'],
    [pgError('53400', 'configuration limit exceeded'), 'postgres', 'postgres is out of resources'],
    [pgError('25006', 'cannot execute INSERT in a read-only transaction'), 'postgres', 'postgres is read-only'],
    [
      parseError('Code: 243. DB::Exception: Cannot reserve 1.00 MiB, not enough space. (NOT_ENOUGH_SPACE)'),
      'clickhouse',
      'clickhouse is out of disk space',
    ],
    [
      parseError('Code: 241. DB::Exception: Memory limit (total) exceeded. (MEMORY_LIMIT_EXCEEDED)'),
      'clickhouse',
      'clickhouse is out of memory',
    ],
    [parseError('Code: 164. DB::Exception: Cannot execute query in readonly mode. (READONLY)'), 'clickhouse', 'clickhouse is read-only'],
    [
      new Error('Code: 75. DB::Exception: Cannot write to file: No space left on device. (CANNOT_WRITE_TO_FILE_DESCRIPTOR)'),
      'clickhouse',
      'clickhouse is out of disk space',
    ],
    [errno('ENOSPC'), 'clickhouse', 'clickhouse is out of disk space'],
    [errno('EDQUOT'), 'postgres', 'postgres is out of disk space'],
    [new Error("OOM command not allowed when used memory > 'maxmemory'."), 'redis', 'redis is out of memory'],
  ] as const)('%s → 503 "%s: %s"', (err, store, words) => {
    const http = toHttpError(asStoreError(store, err));
    expect(http).toMatchObject({ status: 503, detail: `${words}; retry later`, headers: { 'Retry-After': '5' } });
  });

  it('a query error is not a refusal (stays a bug: 500), and a connection failure stays "unavailable"', () => {
    expect(refusalOf(pgError('23505', 'duplicate key value violates unique constraint'))).toBeUndefined();
    expect(toHttpError(asStoreError('postgres', pgError('42601', 'syntax error')))).toBeUndefined();
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toHttpError(asStoreError('postgres', refused))).toMatchObject({ status: 503, detail: 'postgres is unavailable; retry later' });
  });

  it('a refusal counts until a write to that store succeeds, or for the window when none is tried', () => {
    let now = 1_000;
    const r = new WriteRefusals(60_000, () => now);
    expect(r.failed('postgres', pgError('53100', 'disk full'))).toBe('disk_full');
    expect(r.failed('clickhouse', pgError('23505', 'duplicate'))).toBeUndefined();
    expect(r.current()).toEqual([{ store: 'postgres', reason: 'disk_full', at: 1_000 }]);
    r.wrote('postgres');
    expect(r.current()).toEqual([]);
    r.failed('ingest_log', errno('ENOSPC'));
    now += 60_001;
    expect(r.current()).toEqual([]);
  });
});
