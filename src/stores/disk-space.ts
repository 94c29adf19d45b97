// Free space where this process writes: DATA_DIR (PGlite's files when embedded, the admin socket,
// the lock) and INGEST_LOG_DIR (inside DATA_DIR unless moved). `DISK_MIN_FREE_BYTES` is kept free
// there for the stores: the ingest log stops taking records before it would eat into it, and
// /api/health reports `degraded` while free space is under it (docs/operations.md, "Disk").
import fs from 'node:fs';
import path from 'node:path';

export interface DiskSample {
  /** Free bytes an unprivileged writer may use, on the tightest of the watched filesystems. */
  freeBytes: number;
  totalBytes: number;
}

export interface DiskSpace {
  readonly minFreeBytes: number;
  /** The tightest watched filesystem, as last sampled (at most `maxAgeMs` old) less what was written since. */
  sample(maxAgeMs?: number): DiskSample;
  /** Bytes that may still be written before free space falls under the floor (negative: under it already). */
  room(): number;
  /** `bytes` were just written: counted against the sample until the next one. */
  wrote(bytes: number): void;
}

/** The nearest existing folder of `dir` (a folder not made yet lives on its parent's filesystem). */
function existing(dir: string): string {
  let d = dir;
  while (!fs.existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}

export function createDiskSpace(dirs: readonly string[], minFreeBytes: number, sampleMs = 1_000): DiskSpace {
  let last: DiskSample | undefined;
  let at = 0;
  let written = 0;
  const read = (): DiskSample => {
    let tightest: DiskSample | undefined;
    for (const dir of new Set(dirs)) {
      const s = fs.statfsSync(existing(dir));
      const sample = { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
      if (!tightest || sample.freeBytes < tightest.freeBytes) tightest = sample;
    }
    return tightest ?? { freeBytes: Number.MAX_SAFE_INTEGER, totalBytes: Number.MAX_SAFE_INTEGER };
  };
  const sample = (maxAgeMs = sampleMs): DiskSample => {
    const now = performance.now();
    if (!last || now - at >= maxAgeMs) {
      try {
        last = read();
        written = 0;
      } catch (err) {
        // A filesystem that cannot be asked (statfs refused) blocks nothing on its own: the last
        // sample stands; with none, the caller (health) hears of it.
        if (!last) throw err;
      }
      at = now;
    }
    return { freeBytes: Math.max(0, last.freeBytes - written), totalBytes: last.totalBytes };
  };
  return {
    minFreeBytes,
    sample,
    room: () => sample().freeBytes - minFreeBytes,
    wrote(bytes: number) {
      written += bytes;
    },
  };
}
