// Dead letters of the ingest log: records the loader could not store for a reason of their own (a
// deterministic insert failure, found by splitting the batch; span-loader.ts), kept beside the log
// so that one record never blocks the others and is never silently dropped. Each is one file,
// `NNNNNNNNNNNNNNNN.dead` (its sequence number in the log): `[u32 meta length][meta JSON][payload]`,
// written to a temporary name, fsynced and renamed, so a crash leaves it whole or absent (and the
// record, then not marked loaded, is loaded again). Dead letters are few: this keeps their metadata
// in memory and reads a payload only to replay it.
import fs from 'node:fs';
import path from 'node:path';

export interface DeadLetter<H> {
  /** The record's sequence number in the log it came from (its id among the dead letters). */
  seq: number;
  header: H;
  /** Why it could not be stored: the store's last error. */
  error: string;
  /** How many times it was tried alone before being set aside. */
  attempts: number;
  /** When it was set aside (ms). */
  failedAt: number;
  payloadBytes: number;
}

const FILE = /^(\d{16})\.dead$/;
const fileName = (seq: number) => `${String(seq).padStart(16, '0')}.dead`;

export class DeadLetters<H = unknown> {
  private readonly letters = new Map<number, DeadLetter<H>>();

  constructor(readonly dir: string) {}

  /** Reads the dead letters kept by an earlier run (their metadata only); returns how many. */
  open(): number {
    fs.mkdirSync(this.dir, { recursive: true });
    for (const e of fs.readdirSync(this.dir, { withFileTypes: true })) {
      if (!e.isFile()) continue;
      if (e.name.endsWith('.tmp')) {
        fs.rmSync(path.join(this.dir, e.name), { force: true }); // cut by a crash: the record is still in the log
        continue;
      }
      if (!FILE.test(e.name)) continue;
      const letter = this.readMeta(path.join(this.dir, e.name));
      if (letter) this.letters.set(letter.seq, letter);
    }
    return this.letters.size;
  }

  private readMeta(file: string): DeadLetter<H> | undefined {
    const fd = fs.openSync(file, 'r');
    try {
      const head = Buffer.alloc(4);
      if (fs.readSync(fd, head, 0, 4, 0) !== 4) return undefined;
      const meta = Buffer.alloc(head.readUInt32LE(0));
      if (fs.readSync(fd, meta, 0, meta.length, 4) !== meta.length) return undefined;
      return JSON.parse(meta.toString('utf8')) as DeadLetter<H>;
    } catch {
      return undefined;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Sets a record aside, durably (fsync of the file and of the folder) before returning. */
  add(letter: Omit<DeadLetter<H>, 'payloadBytes'>, payload: Buffer): DeadLetter<H> {
    const full: DeadLetter<H> = { ...letter, payloadBytes: payload.length };
    const meta = Buffer.from(JSON.stringify(full), 'utf8');
    const head = Buffer.alloc(4);
    head.writeUInt32LE(meta.length, 0);
    const file = path.join(this.dir, fileName(letter.seq));
    const tmp = `${file}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writevSync(fd, [head, meta, payload]);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    this.syncDir();
    this.letters.set(full.seq, full);
    return full;
  }

  /** The dead letters kept, oldest first, those `where` accepts. */
  list(where: (letter: DeadLetter<H>) => boolean = () => true): DeadLetter<H>[] {
    return [...this.letters.values()].filter(where).sort((a, b) => a.seq - b.seq);
  }

  get(seq: number): DeadLetter<H> | undefined {
    return this.letters.get(seq);
  }

  /** A dead letter's payload, read from its file. */
  payload(seq: number): Buffer {
    const letter = this.letters.get(seq);
    if (!letter) throw new Error(`no dead letter ${seq}`);
    const data = fs.readFileSync(path.join(this.dir, fileName(seq)));
    return data.subarray(4 + data.readUInt32LE(0));
  }

  /** Removes a dead letter (purged, or replayed into the log); false when there is none. */
  remove(seq: number): boolean {
    if (!this.letters.delete(seq)) return false;
    fs.rmSync(path.join(this.dir, fileName(seq)), { force: true });
    this.syncDir();
    return true;
  }

  get count(): number {
    return this.letters.size;
  }

  get bytes(): number {
    let n = 0;
    for (const l of this.letters.values()) n += l.payloadBytes;
    return n;
  }

  private syncDir(): void {
    const fd = fs.openSync(this.dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}
