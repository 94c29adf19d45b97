// The error hierarchy of the HTTP edge and its one renderer. Every error leaves as
// {"detail": "..."}; internal detail goes to the log, never to the body.
import type Koa from 'koa';
import { StoreUnavailableError } from '../stores/errors.ts';

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

// The exact texts of service-spec.md part 7.
export const UNAUTHORIZED_DETAIL = 'Unauthorized - No valid authentication provided';
export const FORBIDDEN_DETAIL = 'Forbidden - User does not have access to this resource';

export const badRequest = (detail: string) => new HttpError(400, detail);
export const unauthorized = () => new HttpError(401, UNAUTHORIZED_DETAIL, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = () => new HttpError(403, FORBIDDEN_DETAIL);
export const notFound = (thing: string) => new HttpError(404, `${thing} not found`);
export const methodNotAllowed = (method: string, path: string, allowed: string[]) =>
  new HttpError(405, `Method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, { Allow: allowed.join(', ') });
export const conflict = (detail: string) => new HttpError(409, detail);
export const payloadTooLarge = (limitBytes: number) => new HttpError(413, `Request body exceeds the limit of ${limitBytes} bytes`);
export const unsupportedMediaType = (got: string | undefined, expected: string) =>
  new HttpError(415, `Content-Type ${got ? `"${got}"` : '(none)'} is not supported; send ${expected}`);
export const unprocessable = (detail: string) => new HttpError(422, detail);
export const unavailable = (detail: string, retryAfterS = 5) => new HttpError(503, detail, { 'Retry-After': String(retryAfterS) });

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
        if (http.status >= 500) ctx.app.emit('error', err, ctx);
        return;
      }
      ctx.status = 500;
      ctx.body = { detail: `Internal server error (request ${String(ctx.state.requestId ?? '')})` };
      // Still emitted, so the log has the stack; the body has only the request id.
      ctx.app.emit('error', err, ctx);
    }
  };
}
