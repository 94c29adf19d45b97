// The web console (web/, built into web/dist by `npm install` and `npm start`), served by the
// API process. Runs after the router, for GET and HEAD only, and answers two kinds of path:
//   /assets/<name>: the bundles; their names carry a content hash, so they are cached for a year
//     (a gzip copy is sent to clients that accept it);
//   the console's own pages (/, /sign-in, /projects/...): index.html, revalidated on every load,
//     so a shared link (filters in the query string) opens the right page.
// Nothing else: /api/* and unknown paths still end in the JSON 404 (and 405) of app.ts. The
// console reads only the public API, with the caller's own credential.
import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import { HttpError } from './errors.ts';

export const CONSOLE_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};
// One path segment of safe characters: no traversal, no encoded separators.
const ASSET = /^\/assets\/([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+)$/;
const PAGE = /^\/(?:sign-in|projects(?:\/[^/]+)*)?\/?$/;

// The console's scripts and styles come from this origin only, and it talks to this origin only:
// an injected script could not load nor send a credential elsewhere.
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

async function readOrUndefined(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
    throw err;
  }
}

export function consoleAssets(dir = CONSOLE_DIR): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const asset = ASSET.exec(ctx.path);
    if (asset) {
      const name = asset[1]!;
      const type = TYPES[path.extname(name)];
      if (!type) return next();
      const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
      const body = (gzip && (await readOrUndefined(path.join(dir, 'assets', `${name}.gz`)))) || undefined;
      const plain = body ? undefined : await readOrUndefined(path.join(dir, 'assets', name));
      if (!body && !plain) return next();
      ctx.vary('Accept-Encoding');
      if (body) ctx.set('Content-Encoding', 'gzip');
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = body ?? plain;
      return;
    }
    if (!PAGE.test(ctx.path)) return next();
    const page = await readOrUndefined(path.join(dir, 'index.html'));
    if (!page) throw new HttpError(404, 'The web console is not built: run `npm run build:console` (npm install and npm start build it)');
    ctx.status = 200;
    ctx.type = TYPES['.html']!;
    ctx.set('Cache-Control', 'no-cache');
    ctx.set(PAGE_HEADERS);
    ctx.etag = crypto.createHash('sha256').update(page).digest('base64url').slice(0, 27);
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = page;
  };
}
