// The SDKs installed as a user installs them, then run against the real service. Each starts from
// a copy of the SDK's folder outside the repository (no node_modules above it, no dist/, no
// __pycache__: a clean checkout), so nothing of this repository's own install can help.
// TypeScript: `npm install <folder>` (npm's prepare builds dist/, installing the SDK's locked
// devDependencies first), then `npm pack` and the tarball installed into a second scratch
// project. In each, a TypeScript program is type-checked against the installed declarations,
// compiled and run with node: it fetches a prompt, compiles it and writes a score, which the
// service then holds. Python: `pip install ./sdk/python` into a venv with no package index,
// then the same program in Python, run from outside the source folder.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mode, tempDir as newTempDir } from '../helpers/env.ts';
import { jsonCaller, serviceForFile } from '../helpers/service.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(REPO, 'node_modules/typescript/bin/tsc');
const svc = serviceForFile();
const api = jsonCaller(() => `${svc().url}/api/projects/default`);

// The tests leave copies of TypeScript and a venv behind: removed when the file is done.
const made: string[] = [];
function tempDir(prefix: string): string {
  const dir = newTempDir(prefix);
  made.push(dir);
  return dir;
}
afterAll(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** The environment of a child: ours without npm's own variables (this test may run under `npm test`). */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of Object.keys(env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(cache|registry|userconfig|globalconfig)$/i.test(key)) delete env[key];
  }
  return env;
}

/** Runs a command to its end: its stdout, or an error with all it printed. */
function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (d) => ((stdout += d), (output += d)));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${code}:\n${output}`)),
    );
  });
}

/** The SDK folder copied as a checkout has it: without what an install or a build left in it. */
function cleanCopy(sdk: 'js' | 'python'): string {
  const to = path.join(tempDir('traceloom-checkout-'), 'sdk', sdk);
  const skip = new Set(['node_modules', 'dist', '__pycache__', 'build']);
  fs.cpSync(path.join(REPO, 'sdk', sdk), to, { recursive: true, filter: (src) => !skip.has(path.basename(src)) });
  return to;
}

/** A prompt with a production label, a full key and a trace id for the score. */
async function fixture(name: string) {
  const created = await api('POST', '/prompts', {
    prompt_id: name,
    type: 'text',
    template: 'Help with {{product}} (eps {{eps}}, {{obj}})',
    labels: ['production'],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const key = await api('POST', '/api-keys', { name, scope: 'full' });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  const traceId = Buffer.from(name.padEnd(16, '-')).toString('hex').slice(0, 32);
  return { env: { TRACELOOM_BASE_URL: svc().url, TRACELOOM_API_KEY: key.body.key as string }, traceId };
}

const EXPECTED_TEXT = 'Help with Loom (eps 1e-7, {"eps":0.00005,"n":2})';

/** What every program prints, checked here together with the score the service now holds. */
async function expectRan(output: string, traceId: string, comment: string) {
  const line = output.trim().split('\n').at(-1)!;
  const result = JSON.parse(line);
  expect(result, output).toMatchObject({ version: 1, text: EXPECTED_TEXT, missing: '404' });
  const stored = await api('GET', `/scores/${result.scoreId}`);
  expect(stored.status, JSON.stringify(stored.body)).toBe(200);
  expect(stored.body).toMatchObject({ trace_id: traceId, name: 'installed', value: 0.75, comment });
  return result;
}

/** A scratch project whose program uses the SDK as its README shows, written in TypeScript. */
function scratchProject(promptId: string, traceId: string, comment: string): string {
  const dir = tempDir('traceloom-app-');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [] },
      files: ['main.ts'],
    }),
  );
  fs.writeFileSync(
    path.join(dir, 'main.ts'),
    `import { Traceloom, TraceloomApiError, type Score } from '@traceloom/sdk';
import { PromptSpanProcessor } from '@traceloom/sdk/otel';

const tl = new Traceloom(); // TRACELOOM_BASE_URL, TRACELOOM_API_KEY
const prompt = await tl.prompts.get(${JSON.stringify(promptId)}, { label: 'production' });
const text: string | unknown[] = prompt.compile({ product: 'Loom', eps: 1e-7, obj: { eps: 0.00005, n: 2 } });
const score: Score = await tl.scores.create({ traceId: ${JSON.stringify(traceId)}, name: 'installed', value: 0.75, comment: ${JSON.stringify(comment)} });
let missing = '';
try {
  await tl.prompts.get('no-such-prompt');
} catch (e) {
  missing = e instanceof TraceloomApiError ? String(e.status) : String(e);
}
const otel = typeof new PromptSpanProcessor().onStart;
console.log(JSON.stringify({ version: prompt.version, text, scoreId: score.id, missing, otel }));
`,
  );
  return dir;
}

async function typecheckAndRun(app: string, env: Record<string, string>): Promise<string> {
  await run(process.execPath, [TSC, '-p', '.', '--strict', '--outDir', 'out'], app);
  return run(process.execPath, ['out/main.js'], app, env);
}

describe(`the SDKs installed from a clean checkout (${mode} mode)`, () => {
  it(
    'TypeScript: npm install <folder>, and npm pack installed as a tarball, each run against the service',
    { timeout: 240_000 },
    async () => {
      const sdk = cleanCopy('js');
      // Nothing above the copy lends it a compiler: prepare has to install the SDK's own.
      expect(() => createRequire(path.join(sdk, 'package.json')).resolve('typescript')).toThrow();
      const npmInstall = ['install', '--prefer-offline', '--no-audit', '--no-fund'];

      const { env, traceId } = await fixture('install-ts');
      const fromFolder = scratchProject('install-ts', traceId, 'npm install <folder>');
      await run('npm', [...npmInstall, sdk], fromFolder);
      const a = await expectRan(await typecheckAndRun(fromFolder, env), traceId, 'npm install <folder>');
      expect(a.otel).toBe('function');

      const packed = tempDir('traceloom-pack-');
      const pack = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', packed], sdk));
      const files = (pack[0].files as { path: string }[]).map((f) => f.path).sort();
      expect(files).toEqual(
        expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/otel.js']),
      );
      expect(files.filter((f) => !f.startsWith('dist/') && !['LICENSE', 'README.md', 'package.json'].includes(f))).toEqual([]);

      const fromTarball = scratchProject('install-ts', traceId, 'npm pack');
      // @opentelemetry/api: the optional peer, which a user of '@traceloom/sdk/otel' installs beside it.
      await run('npm', [...npmInstall, path.join(packed, pack[0].filename), '@opentelemetry/api@1.9.0'], fromTarball);
      const installed = path.join(fromTarball, 'node_modules/@traceloom/sdk');
      expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false);
      expect(JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
      const b = await expectRan(await typecheckAndRun(fromTarball, env), traceId, 'npm pack');
      expect(b.otel).toBe('function');
    },
  );

  it('Python: pip install ./sdk/python into a venv with no package index, run against the service', { timeout: 240_000 }, async () => {
    const sdk = cleanCopy('python');
    const checkout = path.dirname(path.dirname(sdk));
    const venv = path.join(checkout, 'venv');
    await run('python3', ['-m', 'venv', venv], checkout);
    const python = path.join(venv, 'bin', 'python');
    await run(python, ['-m', 'pip', 'install', '--no-index', '--no-input', '--disable-pip-version-check', './sdk/python'], checkout);

    const { env, traceId } = await fixture('install-py');
    const app = tempDir('traceloom-app-');
    fs.writeFileSync(
      path.join(app, 'main.py'),
      `import json
import traceloom
from traceloom import Traceloom, TraceloomApiError

tl = Traceloom()  # TRACELOOM_BASE_URL, TRACELOOM_API_KEY
prompt = tl.prompts.get("install-py", label="production")
text = prompt.compile({"product": "Loom", "eps": 1e-7, "obj": {"eps": 0.00005, "n": 2.0}})
score = tl.scores.create("installed", 0.75, trace_id=${JSON.stringify(traceId)}, comment="pip install")
try:
    tl.prompts.get("no-such-prompt")
    missing = ""
except TraceloomApiError as e:
    missing = str(e.status)
print(json.dumps({"version": prompt.version, "text": text, "scoreId": score["id"], "missing": missing, "file": traceloom.__file__}))
`,
    );
    const result = await expectRan(await run(python, ['main.py'], app, { ...env, PYTHONDONTWRITEBYTECODE: '1' }), traceId, 'pip install');
    expect(result.file.startsWith(path.join(venv, 'lib'))).toBe(true);
    const license = await run(python, ['-c', 'import importlib.metadata as m; print(m.metadata("traceloom")["License"])'], app);
    expect(license.trim()).toBe('Apache-2.0');
  });
});
