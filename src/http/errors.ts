// The one place errors become HTTP: each domain error class (src/errors.ts) has its status and
// headers here, and the renderer sends every error as {"detail": "..."}; internal detail goes to
// the log, never to the body. The gRPC edge maps through toHttpError too (src/grpc/status.ts).
import type Koa from 'koa';
import { StoreUnavailableError } from '../stores/errors.ts';
import {
  BudgetExceeded,
  Conflict,
  DomainError,
  Forbidden,
  Invalid,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthorized,
  Unavailable,
  UnsupportedMediaType,
} from '../errors.ts';

export * from '../errors.ts';

/** An error as the HTTP edge sends it. Routes and middleware may throw one directly. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

export const methodNotAllowed = (method: string, path: string, allowed: string[]) =>
  new HttpError(405, `Method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, { Allow: allowed.join(', ') });

function statusOf(err: DomainError): { status: number; headers?: Record<string, string> } {
  if (err instanceof Invalid) return { status: err.reason === 'unprocessable' ? 422 : 400 };
  if (err instanceof Unauthorized) return { status: 401, headers: err.challenge ? { 'WWW-Authenticate': 'Bearer' } : undefined };
  if (err instanceof BudgetExceeded) return { status: 402 };
  if (err instanceof Forbidden) return { status: 403 };
  if (err instanceof NotFound) return { status: 404 };
  if (err instanceof Conflict) return { status: 409 };
  if (err instanceof PayloadTooLarge) return { status: 413 };
  if (err instanceof UnsupportedMediaType) return { status: 415 };
  if (err instanceof RateLimited) return { status: 429, headers: { 'Retry-After': String(err.retryAfterS) } };
  if (err instanceof Unavailable) return { status: 503, headers: { 'Retry-After': String(err.retryAfterS) } };
  return { status: 500 };
}

/** The HTTP form of an error we can explain; undefined for anything else (a bug: 500, logged). */
export function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainError) {
    const { status, headers } = statusOf(err);
    return status === 500 ? undefined : new HttpError(status, err.detail, headers);
  }
  // A store that cannot be reached or refuses writes (a full disk...): 503 naming it and why (src/stores/errors.ts).
  if (err instanceof StoreUnavailableError) return toHttpError(new Unavailable(err.detail));
  // Errors raised by Koa and its body readers on client input (ctx.throw, aborted requests).
  const e = err as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new HttpError(e.status, e.expose && typeof e.message === 'string' ? e.message : 'Bad request');
  }
  return undefined;
}

/** The domain error an HTTP answer stands for (an API client, such as the admin CLI over the socket). */
export function fromHttpStatus(status: number, detail: string): Error {
  switch (status) {
    case 400:
      return new Invalid(detail);
    case 422:
      return new Invalid(detail, 'unprocessable');
    case 401:
      return new Unauthorized(detail);
    case 402:
      return new BudgetExceeded(detail);
    case 403:
      return new Forbidden(detail);
    case 404:
      return new NotFound(detail);
    case 409:
      return new Conflict(detail);
    case 413:
      return new PayloadTooLarge(detail);
    case 415:
      return new UnsupportedMediaType(detail);
    case 503:
      return new Unavailable(detail);
    default:
      return new HttpError(status, detail);
  }
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
        const chosen = err instanceof Unavailable;
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
