// The error hierarchy shared by domain code and the HTTP edge: a status and a public `detail`.
// Domain modules throw these without knowing about Koa; src/http/errors.ts renders them.

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
/** 402: a budget in block mode is exceeded (the detail starts with "Budget exceeded - "). */
export const paymentRequired = (detail: string) => new HttpError(402, detail);
export const notFound = (thing: string) => new HttpError(404, `${thing} not found`);
export const methodNotAllowed = (method: string, path: string, allowed: string[]) =>
  new HttpError(405, `Method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, { Allow: allowed.join(', ') });
export const conflict = (detail: string) => new HttpError(409, detail);
export const payloadTooLarge = (limitBytes: number) => new HttpError(413, `Request body exceeds the limit of ${limitBytes} bytes`);
export const unsupportedMediaType = (got: string | undefined, expected: string) =>
  new HttpError(415, `Content-Type ${got ? `"${got}"` : '(none)'} is not supported; send ${expected}`);
export const unprocessable = (detail: string) => new HttpError(422, detail);
export const unavailable = (detail: string, retryAfterS = 5) => new HttpError(503, detail, { 'Retry-After': String(retryAfterS) });

