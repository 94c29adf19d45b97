// `npm run admin` as a child process, run asynchronously: the API under test may run in this very
// process and must keep answering its admin socket while the command waits on it.
import { spawn } from 'node:child_process';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run -s admin -- ...` when `viaNpm`, else the entry point through tsx (faster). */
export function runAdmin(env: Record<string, string>, args: string[], opts: { viaNpm?: boolean } = {}): Promise<CliResult> {
  const [cmd, argv] = opts.viaNpm
    ? ['npm', ['run', '-s', 'admin', '--', ...args]]
    : [process.execPath, ['--import', 'tsx', 'src/admin.ts', ...args]];
  const child = spawn(cmd as string, argv as string[], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
