// The Python SDK's unittest suite (sdk/python/tests, the machine's python3, standard library only)
// against the real service started here: this test fails when Python's does, so `npm test` (and CI,
// in both store modes) runs it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { getJson, serviceForFile } from '../helpers/service.ts';

const svc = serviceForFile();
const SDK_DIR = path.resolve(import.meta.dirname, '../../sdk/python');

function run(cmd: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: SDK_DIR, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe(`Python SDK (${mode} mode)`, () => {
  it('its unittest suite passes against the service', { timeout: 180_000 }, async () => {
    const key = await getJson(`${svc().url}/api/projects/default/api-keys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'python-sdk', scope: 'full' }),
    });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const { code, output } = await run('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
      TRACELOOM_BASE_URL: svc().url,
      TRACELOOM_API_KEY: key.body.key as string,
      PYTHONDONTWRITEBYTECODE: '1',
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/^OK$/m);
    expect(output).not.toMatch(/skipped/);
  });
});
