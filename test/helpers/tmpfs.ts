// A real small filesystem for tests of a full disk: a tmpfs mounted for the test (the suite runs
// as root, here and on CI), filled with a file and freed again. No mock: the stores see ENOSPC.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './env.ts';

export interface Tmpfs {
  readonly dir: string;
  /** Free bytes (statfs). */
  free(): number;
  /** Writes a filler file until `leaveBytes` are free (0: until the disk refuses with ENOSPC). */
  fill(leaveBytes?: number): void;
  /** Removes the filler. */
  release(): void;
  unmount(): void;
}

/** A tmpfs of `sizeBytes`, owned by `owner` (a user name, e.g. postgres for a tablespace). */
export function mountTmpfs(sizeBytes: number, owner?: string): Tmpfs {
  const dir = tempDir('traceloom-tmpfs-');
  const ids = owner
    ? `,uid=${execFileSync('id', ['-u', owner]).toString().trim()},gid=${execFileSync('id', ['-g', owner]).toString().trim()}`
    : '';
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700${ids}`, 'tmpfs', dir]);
  const filler = path.join(dir, 'filler');
  const free = () => {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  };
  return {
    dir,
    free,
    fill(leaveBytes = 0) {
      const fd = fs.openSync(filler, 'a');
      try {
        for (const chunk of [1 << 20, 4096]) {
          const buf = Buffer.alloc(chunk, 1);
          for (;;) {
            const want = free() - leaveBytes;
            if (leaveBytes > 0 && want < chunk) break;
            try {
              fs.writeSync(fd, buf);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw err;
            }
          }
        }
      } finally {
        fs.closeSync(fd);
      }
    },
    release() {
      fs.rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
