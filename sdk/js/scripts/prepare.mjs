// `prepare`: npm runs it on `npm install <this folder>`, `npm pack` and `npm publish`. It builds
// dist/, which `exports` points at. npm prepares a folder dependency without installing that
// folder's devDependencies, so in a clean checkout nothing here can compile: install the locked
// ones first (npm ci, from npm's cache when they are in it), then compile.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));

function resolvable(name) {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
}

function run(command, args, env = process.env) {
  // Its output to stderr: stdout is npm's, and `npm pack --json` prints its answer there.
  const r = spawnSync(command, args, { cwd: root, env, stdio: ['ignore', 2, 2] });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!resolvable('typescript') || !resolvable('@opentelemetry/api')) {
  // The outer npm passes its settings down as npm_config_*: an outer `-g`, `--omit=dev`, `--json`
  // or `--install-links` must not steer this install of our own build tools into this folder.
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^npm_config_(global|location|omit|include|production|only|install_links|dry_run|json|workspaces?|save.*)$/i.test(key))
      delete env[key];
  }
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli && /\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  run(command, [...prefix, 'ci', '--ignore-scripts', '--include=dev', '--no-audit', '--no-fund'], env);
}

fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
run(process.execPath, [path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
