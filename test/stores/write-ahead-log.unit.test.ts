// The ingest write-ahead log (src/stores/write-ahead-log.ts) on a real directory: what it promises
// after a crash (a torn tail cut off, every acknowledged record read back, recovery from a cut at
// every byte of a record), group commit (many appends, one write and one fsync each group, order
// kept), the checkpoint, and the lock that keeps a second process out of a log in use.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteAheadLog, type LogRecord } from '../../src/stores/write-ahead-log.ts';
import { tempDir } from '../helpers/env.ts';

type Header = { n: number; tag: string };
const OPTS = { segmentBytes: 1 << 20, maxPendingBytes: 1 << 24, maxPendingRows: 1_000_000, maxMemoryBytes: 1 << 24 };
const open: WriteAheadLog<Header>[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const log of open.splice(0)) await log.close();
  for (const c of children.splice(0)) c.kill();
});

function logAt(dir: string, opts: Partial<typeof OPTS> = {}): WriteAheadLog<Header> {
  const log = new WriteAheadLog<Header>(dir, { ...OPTS, ...opts }, (h) => h.n);
  open.push(log);
  return log;
}

const payloadOf = (i: number) => Buffer.from(`payload-${i}-${'x'.repeat(i % 7)}`);
const segmentsIn = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.log'));

/** Takes every queued record (the loader's view), payloads read back. */
async function drainRecords(log: WriteAheadLog<Header>): Promise<LogRecord<Header>[]> {
  const out: LogRecord<Header>[] = [];
  while (log.queued > 0) out.push(...(await log.take(1 << 30)));
  return out;
}
const summary = (records: LogRecord<Header>[]) => records.map((r) => [r.seq, r.header.tag, r.payload!.toString()]);

/** A closed log of `count` records in one segment; the byte offset where each record starts. */
async function writtenLog(count: number): Promise<{ dir: string; segment: string; starts: number[]; size: number }> {
  const dir = tempDir('traceloom-wal-');
  const log = logAt(dir);
  log.open();
  for (let i = 1; i <= count; i++) await log.append({ n: 1, tag: `r${i}` }, payloadOf(i));
  await log.close();
  open.splice(open.indexOf(log), 1);
  const [name] = segmentsIn(dir);
  const segment = path.join(dir, name!);
  const data = fs.readFileSync(segment);
  const starts: number[] = [];
  for (let at = 0; at < data.length; at += 8 + data.readUInt32LE(at)) starts.push(at);
  return { dir, segment, starts, size: data.length };
}

describe('write-ahead log', () => {
  it('reads back every acknowledged record after a restart, in order, and continues the sequence', async () => {
    const { dir } = await writtenLog(5);
    const log = logAt(dir);
    expect(log.open()).toBe(5);
    expect(summary(await drainRecords(log))).toEqual([1, 2, 3, 4, 5].map((i) => [i, `r${i}`, payloadOf(i).toString()]));
    expect(await log.append({ n: 1, tag: 'r6' }, payloadOf(6))).toBe(6);
  });

  it('a torn tail (a write cut short by a crash) is cut off; the records before it are kept', async () => {
    const { dir, segment, size } = await writtenLog(3);
    // A frame that announces more bytes than follow: the write of a record never acknowledged.
    const torn = Buffer.alloc(20);
    torn.writeUInt32LE(500, 0);
    fs.appendFileSync(segment, torn);
    const log = logAt(dir);
    expect(log.open()).toBe(3);
    expect(fs.statSync(segment).size).toBe(size); // truncated back to the last whole record
    expect(await log.append({ n: 1, tag: 'r4' }, payloadOf(4))).toBe(4);
    await log.close();
    const again = logAt(dir);
    expect(again.open()).toBe(4);
    expect((await drainRecords(again)).map((r) => r.header.tag)).toEqual(['r1', 'r2', 'r3', 'r4']);
  });

  it('recovers after a cut at every byte of a record: the whole records before it, nothing of it', async () => {
    const { dir, segment, starts, size } = await writtenLog(3);
    const original = fs.readFileSync(segment);
    const last = starts[2]!;
    for (let cut = last; cut <= size; cut++) {
      const copy = tempDir('traceloom-wal-cut-');
      fs.writeFileSync(path.join(copy, path.basename(segment)), original.subarray(0, cut));
      fs.copyFileSync(path.join(dir, 'id'), path.join(copy, 'id'));
      const log = logAt(copy);
      const whole = cut === size ? 3 : 2;
      expect(log.open(), `cut at byte ${cut}`).toBe(whole);
      expect(fs.statSync(path.join(copy, path.basename(segment))).size, `cut at byte ${cut}`).toBe(whole === 3 ? size : last);
      expect(
        (await drainRecords(log)).map((r) => r.header.tag),
        `cut at byte ${cut}`,
      ).toEqual(['r1', 'r2', 'r3'].slice(0, whole));
      // The next record takes the sequence number of the one lost, and survives a restart.
      expect(await log.append({ n: 1, tag: 'next' }, payloadOf(9)), `cut at byte ${cut}`).toBe(whole + 1);
      await log.close();
      const reopened = logAt(copy);
      expect(reopened.open(), `cut at byte ${cut}`).toBe(whole + 1);
      await reopened.close();
    }
  });

  it('a damaged record (its checksum does not match) ends what is read back', async () => {
    const { dir, segment, starts } = await writtenLog(3);
    const data = fs.readFileSync(segment);
    data[starts[1]! + 14]! ^= 0xff; // a byte of the second record's header
    fs.writeFileSync(segment, data);
    const log = logAt(dir);
    expect(log.open()).toBe(1);
    expect((await drainRecords(log)).map((r) => r.header.tag)).toEqual(['r1']);
  });

  it('group commit: concurrent appends share writes and fsyncs, each acknowledged once on disk, in order', async () => {
    const dir = tempDir('traceloom-wal-');
    const log = logAt(dir);
    log.open();
    const seqs = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append({ n: 2, tag: `g${i}` }, payloadOf(i))));
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(log.stats.appendedRecords).toBe(200);
    // The first append is written alone; the 199 that came while it was written go in one group.
    expect(log.stats.syncs).toBeLessThan(200);
    expect(log.stats.syncs).toBeGreaterThanOrEqual(1);
    expect(log.pendingRows).toBe(400);
    await log.close();
    const again = logAt(dir);
    expect(again.open()).toBe(200);
    expect((await drainRecords(again)).map((r) => r.header.tag)).toEqual(Array.from({ length: 200 }, (_, i) => `g${i}`));
  });

  it('records marked loaded are not read back; closed segments of loaded records are removed', async () => {
    const dir = tempDir('traceloom-wal-');
    const log = logAt(dir, { segmentBytes: 16 }); // smaller than a record: a segment per group
    log.open();
    for (let i = 1; i <= 4; i++) await log.append({ n: 1, tag: `r${i}` }, payloadOf(i));
    expect(segmentsIn(dir).length).toBe(4);
    log.markLoaded(3);
    expect(segmentsIn(dir).length).toBe(1); // the segments of r1..r3 went; r4's is still written to
    expect(log.pendingRows).toBe(1);
    await log.close();
    const again = logAt(dir);
    expect(again.open()).toBe(1);
    expect((await drainRecords(again)).map((r) => [r.seq, r.header.tag])).toEqual([[4, 'r4']]);
  });

  it('refuses an append beyond its bound, writing nothing', async () => {
    const dir = tempDir('traceloom-wal-');
    const log = logAt(dir, { maxPendingRows: 3 });
    log.open();
    await log.append({ n: 2, tag: 'a' }, payloadOf(1));
    await expect(log.append({ n: 2, tag: 'b' }, payloadOf(2))).rejects.toMatchObject({ reason: 'bound' });
    expect(log.stats.refused).toBe(1);
    log.markLoaded(1);
    expect(await log.append({ n: 2, tag: 'c' }, payloadOf(3))).toBe(2);
  });

  it('the lock: a log in use by another live process is not opened; a stale lock is taken over; close releases it', async () => {
    const dir = tempDir('traceloom-wal-');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(other);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, '.lock'), String(other.pid));
    expect(() => logAt(dir).open()).toThrow(new RegExp(`in use by process ${other.pid}`));
    open.pop(); // never opened
    expect(fs.readFileSync(path.join(dir, '.lock'), 'utf8')).toBe(String(other.pid));

    // The holder died: its lock is stale, and the next process takes it.
    other.kill();
    await new Promise((r) => other.once('exit', r));
    const log = logAt(dir);
    log.open();
    expect(fs.readFileSync(path.join(dir, '.lock'), 'utf8')).toBe(String(process.pid));
    await log.close();
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
  });

  it('a closed log refuses appends', async () => {
    const dir = tempDir('traceloom-wal-');
    const log = logAt(dir);
    log.open();
    await log.close();
    await expect(log.append({ n: 1, tag: 'late' }, payloadOf(1))).rejects.toThrow(/closed/);
  });
});
