// The renderer of errors at the HTTP edge: every error leaves as {"detail": "..."}; internal
// detail goes to the log, never to the body.
import type Koa from 'koa';
import { StoreUnavailableError } from '../stores/errors.ts';
import { HttpError, unavailable } from '../errors.ts';

export * from '../errors.ts';

function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof StoreUnavailableError) return unavailable(`${err.store} is unavailable; retry later`);
  // Errors raised by Koa and its body readers on client input (ctx.throw, aborted requests).
  const e = err as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new HttpError(e.status, e.expose && typeof e.message === 'string' ? e.message : 'Bad request');
  }
  return undefined;
}

/** Top of the chain: everything thrown below leaves as {"detail"} with the right status. */
export function errorRenderer(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const http = toHttpError(err);
      if (http) {
        ctx.status = http.status;
        ctx.set(http.headers);
        ctx.body = { detail: http.detail };
        // A 503 the service chose (backpressure: Retry-After) is not a failure: the access log has
        // it, and a stack per refused request would only add load to an overloaded process.
        const chosen = err instanceof HttpError && http.status === 503;
        if (http.status >= 500 && !chosen) ctx.app.emit('error', err, ctx);
        return;
      }
      ctx.status = 500;
      ctx.body = { detail: `Internal server error (request ${String(ctx.state.requestId ?? '')})` };
      // Still emitted, so the log has the stack; the body has only the request id.
      ctx.app.emit('error', err, ctx);
    }
  };
}
