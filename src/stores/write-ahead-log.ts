// A local write-ahead log: the durable point of ingest. A request's rows are appended as one
// record and the request is answered once an fsync covers it; many requests share one write and
// one fsync (group commit), so the cost of durability does not grow with the request rate. A
// loader drains the records into ClickHouse in large batches and records how far it got; after
// a crash the records past that point are read back and loaded again (loading is idempotent).
//
// On disk: segment files `NNNNNNNNNNNNNNNN.log` (the sequence number of their first record), each
// a run of records `[u32 length][u32 crc32][u32 header length][header JSON][payload]`, and a
// `checkpoint` file naming the first record not yet loaded. A torn record at the end of the last
// segment (a crash during a write: never acknowledged) is cut off when the log is opened.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { DataDirLock } from './data-dir-lock.ts';
import type { DiskSpace } from './disk-space.ts';

export interface LogRecord<H = unknown> {
  /** Increasing from 1 across segments; never reused. */
  seq: number;
  header: H;
  /** In memory while the log's memory bound allows; otherwise read from disk when taken. */
  payload: Buffer | undefined;
  /** Where the payload sits: the segment (its first record's seq) and the offset in it. */
  segment: number;
  offset: number;
  payloadBytes: number;
  /** Bytes the record takes in the log. */
  bytes: number;
  /** Rows the record holds (the bound counts them). */
  rows: number;
  /** When it was appended or recovered (ms). */
  at: number;
}

export interface WriteAheadLogOptions {
  /** A segment is closed once it holds this many bytes. */
  segmentBytes: number;
  /** Appended but not yet loaded, beyond which `append` refuses (backpressure). */
  maxPendingBytes: number;
  maxPendingRows: number;
  /** Bytes of waiting records whose payload is kept in memory; beyond, records wait on disk only (read when taken). */
  maxMemoryBytes: number;
  /**
   * New records are refused while a record appended now would wait longer than this to be loaded
   * (ms; `expectedLagMs`): the loader is behind, and a log that kept accepting would only grow the
   * delay (and the disk, and the assembly lag) of everything behind it. 0: no such bound.
   */
  maxLagMs?: number;
  /**
   * Free space of the log's filesystem and of DATA_DIR (PGlite's files when embedded): a record
   * that would leave less than its floor (DISK_MIN_FREE_BYTES) is refused, so spans waiting for
   * ClickHouse never take the room the stores need to go on writing.
   */
  disk?: Pick<DiskSpace, 'room' | 'wrote' | 'minFreeBytes'>;
}

export class LogFullError extends Error {
  constructor(
    message: string,
    /**
     * `bound`: the unloaded records would exceed the log's size bound; `lag`: the loader is too far
     * behind; `disk`: the record would leave less free space than the floor kept for the stores.
     */
    readonly reason: 'bound' | 'lag' | 'disk' = 'bound',
  ) {
    super(message);
  }
}
/** The disk refused a write (its `cause`: the errno error, ENOSPC on a full disk). */
export class LogWriteError extends Error {}

const FRAME = 12;
const LAG_FLOOR_ROWS = 10_000;
const SEGMENT = /^(\d{16})\.log$/;

interface Waiting<H> {
  frame: Buffer;
  record: LogRecord<H>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const segmentName = (firstSeq: number) => `${String(firstSeq).padStart(16, '0')}.log`;

/** Reads every whole record of a segment; `validBytes` is where the last whole record ends. */
function readSegment<H>(file: string, firstSeq: number, rowsOf: (header: H) => number): { records: LogRecord<H>[]; validBytes: number } {
  const data = fs.readFileSync(file);
  const records: LogRecord<H>[] = [];
  let at = 0;
  let seq = firstSeq;
  while (at + FRAME <= data.length) {
    const length = data.readUInt32LE(at);
    const crc = data.readUInt32LE(at + 4);
    const headerLength = data.readUInt32LE(at + 8);
    const end = at + 8 + length;
    if (length < headerLength + 4 || end > data.length) break; // torn: written only in part
    const body = data.subarray(at + 8, end);
    if (zlib.crc32(body) !== crc) break; // torn or damaged: nothing after it was acknowledged
    const header = JSON.parse(data.subarray(at + FRAME, at + FRAME + headerLength).toString('utf8')) as H;
    // The payload stays on disk until the loader takes the record.
    records.push({
      seq: seq++,
      header,
      payload: undefined,
      segment: firstSeq,
      offset: at + FRAME + headerLength,
      payloadBytes: end - at - FRAME - headerLength,
      bytes: end - at,
      rows: rowsOf(header),
      at: Date.now(),
    });
    at = end;
  }
  return { records, validBytes: at };
}

export class WriteAheadLog<H = unknown> {
  private fd = -1;
  private segmentFirstSeq = 0;
  private segmentSize = 0;
  private nextSeq = 1;
  private waiting: Waiting<H>[] = [];
  /** Written (or recovered) records not yet taken by the loader, oldest first. */
  private queue: LogRecord<H>[] = [];
  private queueHead = 0;
  private available: (() => void) | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;
  /** The last group could not be written: the next one starts a new segment. */
  private failed = false;
  private lock: DataDirLock | undefined;
  /**
   * This log's identity, made when its folder is first used: sequence numbers restart in a new
   * folder (and every node has its own), so whatever is keyed by them downstream (deduplication
   * tokens) must carry this id too.
   */
  id = '';
  /** Records appended (or recovered) and not yet marked loaded, in order. */
  private unloaded: Array<LogRecord<H>> = [];
  /** Segment files on disk, by the sequence number of their first record. */
  private segmentFiles = new Set<number>();
  pendingBytes = 0;
  pendingRows = 0;
  private queuedRows = 0;
  readonly stats = { appendedRecords: 0, appendedBytes: 0, syncs: 0, refused: 0, failedWrites: 0 };

  constructor(
    readonly dir: string,
    private readonly opts: WriteAheadLogOptions,
    /** Rows of a record, from its header (for records read back after a restart). */
    private readonly rowsOf: (header: H) => number,
  ) {}

  /** Opens the log; the records not yet loaded (from an earlier run) are queued first; returns how many. */
  open(): number {
    fs.mkdirSync(this.dir, { recursive: true });
    // One process per log: two appenders would interleave their records.
    this.lock = DataDirLock.acquire(path.join(this.dir, '.lock'));
    const idFile = path.join(this.dir, 'id');
    try {
      this.id = fs.readFileSync(idFile, 'utf8').trim();
    } catch {
      this.id = crypto.randomUUID();
      fs.writeFileSync(idFile, this.id);
    }
    const loadedBefore = this.readCheckpoint();
    const segments = fs
      .readdirSync(this.dir, { withFileTypes: true })
      .filter((e) => e.isFile()) // only segment files this log wrote (never a device or a link)
      .map((e) => SEGMENT.exec(e.name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const recovered: LogRecord<H>[] = [];
    for (let i = 0; i < segments.length; i++) {
      const first = segments[i]!;
      const file = path.join(this.dir, segmentName(first));
      const { records, validBytes } = readSegment<H>(file, first, this.rowsOf);
      if (fs.statSync(file).size > validBytes) fs.truncateSync(file, validBytes); // a torn tail: never acknowledged
      for (const r of records) {
        if (r.seq < loadedBefore) continue;
        recovered.push(r);
        this.queue.push(r);
        this.queuedRows += r.rows;
        this.unloaded.push(r);
        this.pendingBytes += r.bytes;
        this.pendingRows += r.rows;
      }
      const last = records.length ? records[records.length - 1]!.seq + 1 : first;
      this.nextSeq = Math.max(this.nextSeq, last, loadedBefore);
      if (records.every((r) => r.seq < loadedBefore) && i < segments.length - 1) fs.rmSync(file, { force: true });
      else this.segmentFiles.add(first);
    }
    this.startSegment(this.nextSeq);
    return recovered.length;
  }

  /** Bytes of queued records whose payload is in memory. */
  private memoryBytes = 0;

  /**
   * Records written and not yet taken, oldest first, up to `maxBytes` (at least one), their
   * payloads in memory (read back from disk for those that waited there). Waits until
   * `minRows` rows are queued or the oldest has waited `maxWaitMs` (batches grow under load and
   * stay prompt when idle); returns [] once the log is closed and drained.
   */
  async take(maxBytes: number, minRows = 1, maxWaitMs = 0): Promise<LogRecord<H>[]> {
    for (;;) {
      if (this.queueHead < this.queue.length) {
        const waited = Date.now() - this.queue[this.queueHead]!.at;
        if (this.closed || this.queuedRows >= minRows || waited >= maxWaitMs) break;
        await new Promise<void>((resolve) => {
          this.available = resolve;
          setTimeout(resolve, maxWaitMs - waited).unref();
        });
        continue;
      }
      if (this.closed) return [];
      await new Promise<void>((resolve) => (this.available = resolve));
    }
    const out: LogRecord<H>[] = [];
    let bytes = 0;
    while (this.queueHead < this.queue.length && (out.length === 0 || bytes + this.queue[this.queueHead]!.bytes <= maxBytes)) {
      const r = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = undefined as unknown as LogRecord<H>;
      out.push(r);
      bytes += r.bytes;
      this.queuedRows -= r.rows;
      if (r.payload) this.memoryBytes -= r.bytes;
    }
    for (const r of out) if (!r.payload) r.payload = await this.readPayload(r);
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    return out;
  }

  private async readPayload(r: LogRecord<H>): Promise<Buffer> {
    const file = path.join(this.dir, segmentName(r.segment));
    const handle = await fs.promises.open(file, 'r');
    try {
      const size = r.payloadBytes;
      const buf = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(buf, 0, size, r.offset);
      if (bytesRead !== size) throw new LogWriteError(`the ingest log segment ${file} is shorter than its records`);
      return buf;
    } finally {
      await handle.close();
    }
  }

  /** Segment files on disk. */
  get segments(): number {
    return this.segmentFiles.size;
  }

  /** Rows per second the loader marks loaded (a moving average over busy time), 0 before the first load. */
  private loadRowsPerS = 0;
  private lastLoadedAt = 0;

  /**
   * How long a record appended now with `rows` rows would wait to be loaded (ms): what the oldest
   * has waited, or what the rows ahead take to load at the measured rate, whichever is more. Below
   * LAG_FLOOR_ROWS waiting rows the rate is not used (one batch of them is not a backlog).
   */
  expectedLagMs(rows = 0): number {
    const waited = this.oldestUnloadedMs();
    const ahead = this.pendingRows + rows;
    if (this.loadRowsPerS === 0 || ahead < LAG_FLOOR_ROWS) return waited;
    return Math.max(waited, Math.round((ahead * 1000) / this.loadRowsPerS));
  }

  /**
   * Why a record of `rows` rows and `bytes` bytes would be refused now, or undefined: the bounds
   * `append` applies. With nothing (the defaults), whether the log refuses anything at all: a
   * caller asks before doing the work of a record, so an overloaded process does not spend it
   * on records it would refuse.
   */
  refusal(rows = 0, bytes = 0): LogFullError | undefined {
    if (
      this.pendingRows > 0 &&
      (this.pendingBytes + bytes > this.opts.maxPendingBytes || this.pendingRows + rows > this.opts.maxPendingRows)
    ) {
      return new LogFullError(
        `${this.pendingRows} rows (${this.pendingBytes} bytes) are not yet loaded; the bound is ${this.opts.maxPendingRows} rows and ${this.opts.maxPendingBytes} bytes`,
      );
    }
    const lagMs = this.opts.maxLagMs ? this.expectedLagMs(rows) : 0;
    if (lagMs > this.opts.maxLagMs!)
      return new LogFullError(`records not yet loaded would wait ${lagMs} ms; the bound is ${this.opts.maxLagMs} ms`, 'lag');
    const room = this.diskRoom();
    if (room < Math.max(bytes, 1))
      return new LogFullError(
        `${Math.max(0, room + this.opts.disk!.minFreeBytes)} bytes are free on the disk of the ingest log; ${this.opts.disk!.minFreeBytes} are kept free for the stores`,
        'disk',
      );
    return undefined;
  }

  /** Bytes the log may still write above the free-space floor (Infinity: no floor, or free space cannot be read: the write will tell). */
  private diskRoom(): number {
    try {
      return this.opts.disk ? this.opts.disk.room() : Infinity;
    } catch {
      return Infinity;
    }
  }

  /** How long the oldest record not yet loaded has waited (ms), or 0. */
  oldestUnloadedMs(): number {
    return this.unloaded.length ? Date.now() - this.unloaded[0]!.at : 0;
  }

  /** Records written and not yet taken. */
  get queued(): number {
    return this.queue.length - this.queueHead;
  }

  /** Wakes a `take` that waits (at close). */
  private signal(): void {
    const wake = this.available;
    this.available = undefined;
    wake?.();
  }

  /**
   * Appends a record; resolves once it is on disk (fsync), rejects with LogFullError when the
   * unloaded records would exceed the bound (nothing written) or LogWriteError when the disk
   * refused the write (nothing of the group is kept).
   */
  append(header: H, payload: Buffer): Promise<number> {
    if (this.closed) return Promise.reject(new LogWriteError('the ingest log is closed'));
    const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
    const bytes = FRAME + headerBytes.length + payload.length;
    const refused = this.refusal(this.rowsOf(header), bytes);
    if (refused) {
      this.stats.refused++;
      return Promise.reject(refused);
    }
    const rows = this.rowsOf(header);
    const frame = Buffer.allocUnsafe(FRAME + headerBytes.length);
    frame.writeUInt32LE(headerBytes.length + payload.length + 4, 0);
    frame.writeUInt32LE(headerBytes.length, 8);
    headerBytes.copy(frame, FRAME);
    const crc = zlib.crc32(payload, zlib.crc32(frame.subarray(8)));
    frame.writeUInt32LE(crc, 4);
    const seq = this.nextSeq++;
    this.pendingBytes += bytes;
    this.pendingRows += rows;

    // Segment 0: not written yet (segments are named by a sequence number, from 1).
    const record: LogRecord<H> = {
      seq,
      header,
      payload,
      segment: 0,
      offset: FRAME + headerBytes.length,
      payloadBytes: payload.length,
      bytes,
      rows,
      at: Date.now(),
    };
    this.unloaded.push(record);
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({
        frame,
        record,
        resolve: () => resolve(seq),
        reject: (err) => {
          this.forget(seq);
          reject(err);
        },
      });
      this.kick();
    });
  }

  /** Records up to and including `seq` are loaded: they are not replayed, and their segments go. */
  markLoaded(seq: number): void {
    let n = 0;
    let rows = 0;
    const firstAt = this.unloaded[0]?.at ?? 0;
    while (n < this.unloaded.length && this.unloaded[n]!.seq <= seq) {
      this.pendingBytes -= this.unloaded[n]!.bytes;
      this.pendingRows -= this.unloaded[n]!.rows;
      rows += this.unloaded[n]!.rows;
      n++;
    }
    if (n === 0) return;
    // The load rate, measured over busy time only: a load could not start before its first record came.
    const now = Date.now();
    const busyMs = now - Math.max(this.lastLoadedAt, firstAt);
    if (busyMs > 0) {
      const sample = (rows * 1000) / busyMs;
      this.loadRowsPerS = this.loadRowsPerS === 0 ? sample : 0.7 * this.loadRowsPerS + 0.3 * sample;
    }
    this.lastLoadedAt = now;
    this.unloaded.splice(0, n);
    this.writeCheckpoint(seq + 1);
    // Closed segments whose records are all loaded are removed.
    const oldestNeeded = this.unloaded.length ? this.segmentOf(this.unloaded[0]!) : this.segmentFirstSeq;
    if (![...this.segmentFiles].some((s) => s < oldestNeeded && s !== this.segmentFirstSeq)) return;
    for (const f of fs.readdirSync(this.dir)) {
      const m = SEGMENT.exec(f);
      if (m && Number(m[1]) < oldestNeeded && Number(m[1]) !== this.segmentFirstSeq) {
        fs.rmSync(path.join(this.dir, f), { force: true });
        this.segmentFiles.delete(Number(m[1]));
      }
    }
  }

  /** Waits for every append made so far to be written. */
  async drain(): Promise<void> {
    while (this.writing || this.waiting.length) await (this.writing ?? Promise.resolve());
  }

  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    this.signal();
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    this.lock?.release();
    this.lock = undefined;
  }

  private segmentOf(u: { segment: number }): number {
    return u.segment > 0 ? u.segment : this.segmentFirstSeq;
  }

  private forget(seq: number): void {
    const i = this.unloaded.findIndex((u) => u.seq === seq);
    if (i >= 0) {
      this.pendingBytes -= this.unloaded[i]!.bytes;
      this.pendingRows -= this.unloaded[i]!.rows;
      this.unloaded.splice(i, 1);
    }
  }

  /** Opens the segment whose first record is `firstSeq`. */
  private startSegment(firstSeq: number): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.segmentFirstSeq = firstSeq;
    const file = path.join(this.dir, segmentName(this.segmentFirstSeq));
    this.fd = fs.openSync(file, 'a');
    this.segmentFiles.add(this.segmentFirstSeq);
    this.segmentSize = fs.fstatSync(this.fd).size;
    // The directory entry of a new segment must survive a crash as well as its bytes.
    const dirFd = fs.openSync(this.dir, 'r');
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
  }

  /** One write and one fsync for everything waiting; the next group starts when it ends. */
  private kick(): void {
    if (this.writing || this.waiting.length === 0) return;
    const group = this.waiting;
    this.waiting = [];
    this.writing = this.writeGroup(group).finally(() => {
      this.writing = undefined;
      this.kick();
    });
  }

  private async writeGroup(group: Waiting<H>[]): Promise<void> {
    if (this.segmentSize >= this.opts.segmentBytes || this.failed) {
      try {
        this.startSegment(group[0]!.record.seq);
        this.failed = false;
      } catch (err) {
        const error = new LogWriteError(`the ingest log could not start a segment: ${(err as Error).message}`, { cause: err });
        for (const w of group) w.reject(error);
        return;
      }
    }
    const fd = this.fd;
    const start = this.segmentSize;
    const buffers: Buffer[] = [];
    let total = 0;
    for (const w of group) {
      w.record.segment = this.segmentFirstSeq;
      w.record.offset = start + total + w.frame.length; // where its payload starts in the segment
      buffers.push(w.frame, w.record.payload!);
      total += w.frame.length + w.record.payload!.length;
    }
    try {
      let written = 0;
      while (written < total) {
        const n = await new Promise<number>((resolve, reject) =>
          fs.writev(fd, written === 0 ? buffers : remaining(buffers, written), (err, bytes) => (err ? reject(err) : resolve(bytes))),
        );
        written += n;
      }
      await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
    } catch (err) {
      // Nothing of this group is kept: cut the segment back to where the group began, and write
      // the next group to a new segment (the disk may have room again by then).
      this.stats.failedWrites++;
      this.failed = true;
      try {
        fs.ftruncateSync(fd, start);
      } catch {
        // the next group's write will fail as well, and say so
      }
      const error = new LogWriteError(`the ingest log could not be written: ${(err as Error).message}`, { cause: err });
      for (const w of group) w.reject(error);
      return;
    }
    this.segmentSize = start + total;
    this.opts.disk?.wrote(total);
    this.stats.syncs++;
    this.stats.appendedRecords += group.length;
    this.stats.appendedBytes += total;
    for (const w of group) {
      const r = w.record;
      // Within the memory bound a record waits with its payload; beyond, on disk only (read when taken).
      if (this.memoryBytes + r.bytes <= this.opts.maxMemoryBytes) this.memoryBytes += r.bytes;
      else r.payload = undefined;
      this.queue.push(r);
      this.queuedRows += r.rows;
      w.resolve();
    }
    this.signal();
  }

  private readCheckpoint(): number {
    try {
      const v = JSON.parse(fs.readFileSync(path.join(this.dir, 'checkpoint'), 'utf8')) as { next?: unknown };
      return typeof v.next === 'number' ? v.next : 1;
    } catch {
      return 1;
    }
  }

  /** A stale checkpoint only replays loaded records (harmless); so it is renamed into place, not fsynced. */
  private writeCheckpoint(next: number): void {
    const tmp = path.join(this.dir, 'checkpoint.tmp');
    fs.writeFileSync(tmp, JSON.stringify({ next }));
    fs.renameSync(tmp, path.join(this.dir, 'checkpoint'));
  }
}

/** The buffers past the first `skip` bytes (a short write continues where it stopped). */
function remaining(buffers: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  for (const b of buffers) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}
