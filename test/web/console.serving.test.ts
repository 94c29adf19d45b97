// How the API process serves the web console (src/http/console.ts), over real HTTP: the page and
// its bundles with their content types and caching, the console's routes answered with the page
// (links with filters can be shared), and nothing under /api/ nor any other path shadowed. In dev
// mode (AUTH_REQUIRED=false) a real browser opens the console without signing in, and an empty
// project says how to send traces.
import fs from 'node:fs';
import http from 'node:http';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleAssets, CONSOLE_DIR } from '../../src/http/console.ts';
import { errorRenderer } from '../../src/http/errors.ts';
import { dropTestDatabases, tempDir } from '../helpers/env.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { collectPageErrors, launchBrowser } from '../helpers/browser.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService(); // AUTH_REQUIRED=false
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

/** A raw GET (no URL normalisation, no automatic decompression). */
function raw(
  url: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const manifest = () =>
  JSON.parse(fs.readFileSync(`${CONSOLE_DIR}/manifest.json`, 'utf8')) as { files: Array<{ name: string; bytes: number }> };

describe('serving the console', () => {
  it('answers / with the page: HTML, revalidated, with a strict content security policy and an ETag', async () => {
    const r = await raw(svc.url, '/');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['content-security-policy']).toContain("default-src 'self'");
    expect(r.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.body.toString()).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js">/);
    const again = await raw(svc.url, '/', { 'If-None-Match': String(r.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('serves the bundles with their content types, cached for a year, gzip to clients that accept it', async () => {
    const page = (await raw(svc.url, '/')).body.toString();
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(page)![1]!;
    const css = /href="(\/assets\/[^"]+\.css)"/.exec(page)![1]!;
    const plain = await raw(svc.url, js);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBe(manifest().files.find((f) => f.name === js.slice(1))!.bytes);
    const zipped = await raw(svc.url, js, { 'Accept-Encoding': 'gzip, deflate' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toContain('Accept-Encoding');
    expect(zipped.body.length).toBeLessThan(plain.body.length / 2);
    const styles = await raw(svc.url, css);
    expect(styles.headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await raw(svc.url, js, {}, 'HEAD')).status).toBe(200);
  });

  it("answers the console's own routes with the page, so a link with filters opens it", async () => {
    for (const path of [
      '/sign-in',
      '/projects/acme/executions?model=gpt-4o&status=error',
      '/projects/acme/executions/abc123',
      '/projects/acme/prompts/support-reply?tab=diff',
      '/projects/acme/spend/',
    ]) {
      const r = await raw(svc.url, path);
      expect([path, r.status, r.headers['content-type']]).toEqual([path, 200, 'text/html; charset=utf-8']);
    }
  });

  it('shadows nothing else: /api/* and unknown paths keep their JSON 404 and 405, and assets cannot escape their folder', async () => {
    const cases: Array<[string, string, number]> = [
      ['GET', '/api/nope', 404],
      ['GET', '/api', 404],
      ['GET', '/api/projects/acme/executions/abc123/nothing', 404],
      ['GET', '/favicon.ico', 404],
      ['GET', '/assets/main-NOPE.js', 404],
      ['GET', '/assets/../package.json', 404],
      ['GET', '/assets/%2e%2e%2fpackage.json', 404],
      ['GET', '/assets/manifest.json', 404],
      ['GET', '/web/dist/index.html', 404],
      ['POST', '/', 404],
      ['POST', '/api/health', 405],
    ];
    for (const [method, path, status] of cases) {
      const r = await raw(svc.url, path, {}, method);
      expect([method, path, r.status, r.headers['content-type']]).toEqual([method, path, status, 'application/json; charset=utf-8']);
      expect(JSON.parse(r.body.toString()).detail).toBeTypeOf('string');
    }
    const health = await raw(svc.url, '/api/health');
    expect([health.status, JSON.parse(health.body.toString()).status]).toEqual([200, 'ok']);
    const metrics = await raw(svc.url, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).not.toContain('text/html');
  });

  it('says how to build the console when it is not built', async () => {
    const koa = new Koa();
    koa.use(errorRenderer());
    koa.use(consoleAssets(tempDir('traceloom-no-console-')));
    const server = http.createServer(koa.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const r = await raw(`http://127.0.0.1:${(server.address() as { port: number }).port}`, '/');
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body.toString()).detail).toContain('npm run build:console');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the console in dev mode (AUTH_REQUIRED=false), in a real browser', () => {
  it('opens without signing in, and an empty project says which exporter variables to set', async () => {
    const browser = await launchBrowser();
    try {
      const errors = collectPageErrors(browser.page);
      await browser.page.goto(`${svc.url}/`);
      await browser.page.waitForURL(`${svc.url}/projects/default/executions`);
      const empty = browser.page.locator('.empty');
      await expect(empty.locator('h3').textContent()).resolves.toBe('No executions yet');
      const text = await empty.textContent();
      expect(text).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=${svc.url}/api`);
      expect(text).toContain('OTEL_EXPORTER_OTLP_HEADERS=x-api-key=');
      await expect(browser.page.locator('aside .who').textContent()).resolves.toContain('dev mode');
      await browser.screenshot('dev-mode-executions-empty');
      await browser.page.click('nav a:has-text("Prompts")');
      await expect(browser.page.locator('.empty h3').textContent()).resolves.toBe('No prompts yet');
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
