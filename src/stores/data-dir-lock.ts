// One process per DATA_DIR: the embedded engines are not made to share their files.
import fs from 'node:fs';
import path from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock file of a DATA_DIR: it holds the pid of the process that owns the embedded stores. */
export const dataDirLockFile = (dataDir: string) => path.join(dataDir, '.lock');

export class DataDirLock {
  private constructor(private readonly file: string) {}

  static acquire(file: string): DataDirLock {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
        return new DataDirLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const holder = DataDirLock.holder(file);
        if (holder !== undefined) {
          throw new Error(`DATA_DIR ${path.dirname(file)} is in use by process ${holder}: embedded stores belong to one process`);
        }
        // A stale lock from a process that died (or our own, left by an unclean close): take it over.
        fs.rmSync(file, { force: true });
      }
    }
    throw new Error(`could not lock DATA_DIR ${path.dirname(file)}`);
  }

  /** The live process (other than this one) that holds the lock file, if any. */
  static holder(file: string): number | undefined {
    let holder: number;
    try {
      holder = Number(fs.readFileSync(file, 'utf8').trim());
    } catch {
      return undefined;
    }
    return holder && holder !== process.pid && alive(holder) ? holder : undefined;
  }

  release(): void {
    try {
      if (fs.readFileSync(this.file, 'utf8').trim() === String(process.pid)) fs.rmSync(this.file, { force: true });
    } catch {
      // already gone
    }
  }
}
