// The API as a child process (`npm start`'s entry point), for tests that signal or kill it.
import { spawn, type ChildProcess } from 'node:child_process';
import { migratedChdbDir } from './env.ts';

export interface ChildService {
  child: ChildProcess;
  url: string;
  logs: () => string;
  exited: Promise<number | null>;
}

/** Children still running: killed when the test process exits, so a failed test leaves no server behind. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/** Starts src/main.ts with `env` and resolves once it serves. Its own CHDB_DIR (migrated) unless one is given. */
export async function startChild(env: Record<string, string>, opts: { chdbDir?: string } = {}): Promise<ChildService> {
  const chdbDir = opts.chdbDir ?? (await migratedChdbDir());
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info', CHDB_DIR: chdbDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line:\n${out}`)), 60_000);
    const check = () => {
      const m = /"url":"(http:\/\/[^"]+)".*traceloom listening/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', () => reject(new Error(`exited before listening:\n${out}`)));
  });
  return { child, url, logs: () => out, exited };
}
