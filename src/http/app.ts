// The whole request path, in order:
//   request id → access log → metrics → request deadline → error renderer → router (per route: authenticate → path
//   parameters → authorize → query and JSON body → handler; every input is validated by one
//   validator before a handler or store sees it)
//   → the web console (console.ts: its pages and bundles, GET only, nothing under /api)
//   → 404 / 405 for what no route answers.
import crypto from 'node:crypto';
import Koa from 'koa';
import { Router } from '@koa/router';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { Identity } from '../auth/identity.ts';
import type { Domain } from '../compose/domain.ts';
import type { Metrics } from '../metrics.ts';
import { authenticate, authorize } from './auth.ts';
import { readJson } from './body.ts';
import { errorRenderer, methodNotAllowed, notFound } from './errors.ts';
import { buildOpenApi } from './openapi.ts';
import { consoleAssets } from './console.ts';
import { createRoutes } from './routes/index.ts';
import type { RouteDef, RouteState } from './routes/types.ts';
import { createValidator, type Validator } from './validation.ts';

export interface AppDeps {
  config: Config;
  stores: Stores;
  logger: Logger;
  identity: Identity;
  domain: Domain;
  validator?: Validator;
  /** Routes beyond the service's own; tests use this to exercise the chain with bodies. */
  extraRoutes?: (validator: Validator) => RouteDef[];
}

export interface TraceloomApp {
  koa: Koa<RouteState>;
  routes: readonly RouteDef[];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function requestId(): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    // A caller's id is echoed when it is a plain token; anything else is replaced, not reflected.
    ctx.state.requestId = REQUEST_ID.test(given) ? given : crypto.randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}

function accessLog(logger: Logger): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // Method, path, status and timing only: no bodies, no headers, no query string (it may
      // carry filter values a user considers private).
      logger.info(
        {
          req_id: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
          bytes_in: Number(ctx.get('Content-Length')) || 0,
          project_id: ctx.state.principal?.projectId,
        },
        'request',
      );
    }
  };
}

/** Requests by route pattern (never the raw path: ids would make a series per request) and status. */
function httpMetrics(metrics: Metrics): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}

/**
 * A request whose body has not all arrived REQUEST_TIMEOUT_MS after it began is cut, as Node's
 * server.requestTimeout would (which is off: it cannot spare a route). A route whose body is an
 * unbounded stream (an import of any size) is spared; it is cut when idle instead (`streamIdle`).
 */
function requestDeadline(ms: number): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    const { req, res } = ctx;
    const timer = setTimeout(() => {
      if (!req.complete && !ctx.state.unboundedBody) req.socket.destroy();
    }, ms);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
    await next();
  };
}

/** For a route with an unbounded body: spared the request deadline, cut after `idleMs` without a byte. */
function streamIdle(idleMs: number): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    ctx.state.unboundedBody = true;
    // Without a listener, Node destroys a socket that times out; after the answer the server sets
    // the keep-alive timeout on it again.
    ctx.req.setTimeout(idleMs);
    await next();
  };
}

/** Before authorize, which may look the path's project up: text no store can hold never reaches one. */
function pathParameters(validator: Validator): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    validator.validatePath((ctx as unknown as { params: Record<string, string> }).params);
    await next();
  };
}

function input(route: RouteDef, validator: Validator, limitBytes: number): Koa.Middleware<RouteState> {
  return async (ctx, next) => {
    if (route.query) ctx.state.query = validator.validateQuery(route.query, ctx.query);
    if (route.body) ctx.state.body = validator.validate(route.body, await readJson(ctx, limitBytes), 'body', route.batch);
    await next();
  };
}

export function createApp(deps: AppDeps): TraceloomApp {
  const { config, stores, logger } = deps;
  const validator = deps.validator ?? createValidator();

  let document: object | undefined;
  const routes: RouteDef[] = [
    ...createRoutes({
      config,
      stores,
      identity: deps.identity,
      domain: deps.domain,
      openapi: () => (document ??= buildOpenApi(routes, validator.schemas)),
    }),
    ...(deps.extraRoutes?.(validator) ?? []),
  ];

  const router = new Router<RouteState>();
  for (const route of routes) {
    router.register(
      route.path,
      [route.method],
      [
        ...(route.rawBody?.unbounded ? [streamIdle(config.timeouts.streamIdleMs)] : []),
        authenticate(route, deps.identity),
        pathParameters(validator),
        authorize(route, stores.postgres),
        input(route, validator, config.limits.maxJsonBytes),
        (ctx) => route.handler(ctx as never),
      ],
    );
  }

  const koa = new Koa<RouteState>();
  koa.proxy = false;
  koa.silent = true;
  koa.on('error', (err: Error, ctx?: Koa.Context) => {
    logger.error({ req_id: ctx?.state?.requestId, method: ctx?.method, path: ctx?.path, err }, 'request failed');
  });

  koa.use(requestId());
  koa.use(accessLog(logger));
  koa.use(httpMetrics(deps.domain.metrics));
  koa.use(requestDeadline(config.timeouts.requestMs));
  koa.use(errorRenderer());
  koa.use(router.routes());
  koa.use(consoleAssets()); // the web console's pages and bundles; never a path under /api
  koa.use(async (ctx) => {
    // Reached only when no route answered: 405 when the path exists with other methods, else 404.
    const match = router.match(ctx.path, ctx.method);
    const allowed = [...new Set(match.path.flatMap((layer) => layer.methods))].filter((m) => m !== 'HEAD');
    if (allowed.length > 0) throw methodNotAllowed(ctx.method, ctx.path, allowed);
    throw notFound(`Route ${ctx.method} ${ctx.path}`);
  });

  return { koa, routes };
}
