// The dead-letter files beside the ingest log (src/stores/dead-letters.ts) and which store errors
// count as a store in trouble rather than bad records (src/stores/errors.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeadLetters } from '../../src/stores/dead-letters.ts';
import { isTransientStoreError, StoreUnavailableError } from '../../src/stores/errors.ts';
import { tempDir } from '../helpers/env.ts';

describe('dead letters on disk', () => {
  it('keep header, error and payload across a reopen; a file cut by a crash is discarded; removal is for good', () => {
    const dir = path.join(tempDir(), 'dead-letters');
    const a = new DeadLetters<{ p: string }>(dir);
    expect(a.open()).toBe(0);
    a.add({ seq: 7, header: { p: 'acme' }, error: 'Code: 469. constraint', attempts: 3, failedAt: 1_000 }, Buffer.from('payload-7'));
    a.add({ seq: 12, header: { p: 'other' }, error: 'boom', attempts: 3, failedAt: 2_000 }, Buffer.alloc(0));
    fs.writeFileSync(path.join(dir, `${'13'.padStart(16, '0')}.dead.tmp`), 'half written');
    const b = new DeadLetters<{ p: string }>(dir);
    expect(b.open()).toBe(2);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(b.list().map((l) => l.seq)).toEqual([7, 12]);
    expect(b.list((l) => l.header.p === 'acme')).toEqual([
      { seq: 7, header: { p: 'acme' }, error: 'Code: 469. constraint', attempts: 3, failedAt: 1_000, payloadBytes: 9 },
    ]);
    expect(b.payload(7).toString()).toBe('payload-7');
    expect(b.payload(12).length).toBe(0);
    expect(b.bytes).toBe(9);
    expect(b.remove(7)).toBe(true);
    expect(b.remove(7)).toBe(false);
    const c = new DeadLetters<{ p: string }>(dir);
    expect(c.open()).toBe(1);
    expect(c.get(7)).toBeUndefined();
  });
});

describe('a store in trouble, or bad records', () => {
  const ch = (code: number, message: string) =>
    Object.assign(new Error(`Code: ${code}. DB::Exception: ${message}`), { code: String(code) });
  it('transient: unreachable, out of space, read-only, overloaded, merges behind', () => {
    expect(isTransientStoreError(new StoreUnavailableError('clickhouse'))).toBe(true);
    expect(isTransientStoreError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientStoreError(Object.assign(new Error('no space'), { code: 'ENOSPC' }))).toBe(true);
    expect(isTransientStoreError(ch(243, 'Cannot reserve 1.00 MiB, not enough space'))).toBe(true);
    expect(isTransientStoreError(ch(252, 'Too many parts (300). Merges are processing significantly slower than inserts'))).toBe(true);
    expect(isTransientStoreError(Object.assign(new Error('could not extend file'), { code: '53100' }))).toBe(true);
    expect(isTransientStoreError(new Error('LOADING Redis is loading the dataset in memory'))).toBe(true);
  });
  it("the records' own: too many partitions, a constraint, a type error", () => {
    expect(isTransientStoreError(ch(252, 'Too many partitions for single INSERT block (more than 1000)'))).toBe(false);
    expect(
      isTransientStoreError(Object.assign(new Error('Query failed: Code: 469. DB::Exception: Constraint'), { clickhouseCode: 469 })),
    ).toBe(false);
    expect(isTransientStoreError(ch(53, 'Type mismatch'))).toBe(false);
    expect(isTransientStoreError('not an error')).toBe(false);
  });
});
