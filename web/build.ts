// Builds the web console: web/src → web/dist (ignored by git). One JS and one CSS bundle with
// content-hashed names under assets/ (so the server may cache them for a year), a gzip copy of
// each, and the index.html that names them. `--if-stale` builds only when the sources, this script
// or the bundled packages changed since the last build (manifest.json keeps their hash): run by
// `npm install` (prepare), `npm start` (prestart) and the test suite's global setup.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

export const WEB_DIR = path.dirname(fileURLToPath(import.meta.url));
export const DIST_DIR = path.join(WEB_DIR, 'dist');
const SRC_DIR = path.join(WEB_DIR, 'src');
const BUNDLED_PACKAGES = ['preact', 'uplot', 'esbuild'];
/** Files of the service the console bundles too (the prompt editor renders with the API's code). */
const SHARED_SOURCES = [path.join(WEB_DIR, '..', 'src', 'prompts', 'template-render.ts')];

export interface ConsoleBuild {
  built: boolean;
  dir: string;
  /** Files under assets/ with their raw and gzip sizes, and index.html. */
  files: Array<{ name: string; bytes: number; gzipBytes: number }>;
}

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** What the bundle is made of: every source file, this script, the bundled packages' versions. */
export function sourceHash(): string {
  const h = crypto.createHash('sha256');
  for (const file of [...listFiles(SRC_DIR), ...SHARED_SOURCES, fileURLToPath(import.meta.url)]) {
    h.update(path.relative(WEB_DIR, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  for (const pkg of BUNDLED_PACKAGES) {
    const manifest = path.join(WEB_DIR, '..', 'node_modules', pkg, 'package.json');
    h.update(`${pkg}@${JSON.parse(fs.readFileSync(manifest, 'utf8')).version}\0`);
  }
  return h.digest('hex');
}

function readManifest(dir: string): { source_hash: string; files: ConsoleBuild['files'] } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

const html = (js: string, css: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Traceloom</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${css}">
<script type="module" src="/assets/${js}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading the Traceloom console…</p></div>
<noscript>The Traceloom console needs JavaScript. The API is at /api (see /api/openapi.json).</noscript>
</body>
</html>
`;

export async function buildConsole(opts: { ifStale?: boolean } = {}): Promise<ConsoleBuild> {
  const hash = sourceHash();
  const current = readManifest(DIST_DIR);
  if (opts.ifStale && current?.source_hash === hash && fs.existsSync(path.join(DIST_DIR, 'index.html'))) {
    return { built: false, dir: DIST_DIR, files: current.files };
  }
  // Built beside dist and swapped in, so a concurrent reader never sees half a build.
  const tmp = path.join(WEB_DIR, `.dist-${process.pid}-${Date.now()}`);
  try {
    const result = await esbuild.build({
      entryPoints: [path.join(SRC_DIR, 'main.tsx')],
      outdir: path.join(tmp, 'assets'),
      entryNames: '[name]-[hash]',
      bundle: true,
      format: 'esm',
      target: ['chrome109', 'firefox115', 'safari16'],
      jsx: 'automatic',
      jsxImportSource: 'preact',
      minify: true,
      metafile: true,
      legalComments: 'none',
      logLevel: 'silent',
    });
    const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
    const js = outputs.find((f) => f.endsWith('.js'));
    const css = outputs.find((f) => f.endsWith('.css'));
    if (!js || !css) throw new Error(`console build produced ${outputs.join(', ')}: expected one .js and one .css`);
    fs.writeFileSync(path.join(tmp, 'index.html'), html(js, css));
    const files = ['index.html', `assets/${js}`, `assets/${css}`].map((name) => {
      const raw = fs.readFileSync(path.join(tmp, name));
      const gz = zlib.gzipSync(raw, { level: 9 });
      if (name.startsWith('assets/')) fs.writeFileSync(path.join(tmp, `${name}.gz`), gz);
      return { name, bytes: raw.length, gzipBytes: gz.length };
    });
    fs.writeFileSync(path.join(tmp, 'manifest.json'), `${JSON.stringify({ source_hash: hash, files }, null, 2)}\n`);
    const old = `${DIST_DIR}-old-${process.pid}-${Date.now()}`;
    if (fs.existsSync(DIST_DIR)) fs.renameSync(DIST_DIR, old);
    fs.renameSync(tmp, DIST_DIR);
    fs.rmSync(old, { recursive: true, force: true });
    return { built: true, dir: DIST_DIR, files };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const r = await buildConsole({ ifStale: process.argv.includes('--if-stale') });
    const size = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
    if (r.built) {
      for (const f of r.files) process.stdout.write(`console: web/dist/${f.name} ${size(f.bytes)} (gzip ${size(f.gzipBytes)})\n`);
    }
  } catch (err) {
    process.stderr.write(`console build failed: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
