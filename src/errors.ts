// The errors domain and store code throw: what went wrong, in words a caller can act on (the
// public `detail`), never how a transport reports it. src/http/errors.ts maps each class to its
// HTTP status and headers (and src/grpc/status.ts to gRPC codes through that mapping).

export class DomainError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = new.target.name;
  }
}

/**
 * The input is wrong. `malformed` (the default): it cannot be read as asked (a bad parameter,
 * body or encoding); `unprocessable`: it is well-formed but cannot be applied (an unknown prompt
 * version named in a record, a template variable missing, values the store refuses).
 */
export class Invalid extends DomainError {
  constructor(
    detail: string,
    readonly reason: 'malformed' | 'unprocessable' = 'malformed',
  ) {
    super(detail);
  }
}

/** `resource` names what is missing ('prompt', 'version', 'label', …), for callers that answer differently per kind. */
export class NotFound extends DomainError {
  constructor(
    detail: string,
    readonly resource = '',
  ) {
    super(detail);
  }
}

/** The request contradicts what is stored (a different content under an idempotency key, a duplicate). */
export class Conflict extends DomainError {}

// The exact texts of docs/api-conventions.md ("Errors").
export const UNAUTHORIZED_DETAIL = 'Unauthorized - No valid authentication provided';
export const FORBIDDEN_DETAIL = 'Forbidden - User does not have access to this resource';

/** No valid credentials. `challenge`: the caller is told which scheme to use (Bearer). */
export class Unauthorized extends DomainError {
  constructor(
    detail = UNAUTHORIZED_DETAIL,
    readonly challenge = true,
  ) {
    super(detail);
  }
}

export class Forbidden extends DomainError {
  constructor(detail = FORBIDDEN_DETAIL) {
    super(detail);
  }
}

/** A budget in block mode is exceeded (the detail starts with "Budget exceeded - "). */
export class BudgetExceeded extends DomainError {}

export class PayloadTooLarge extends DomainError {}

export class UnsupportedMediaType extends DomainError {}

/** Cannot serve now (a store down, a queue full): the caller retries after `retryAfterS` seconds. */
export class Unavailable extends DomainError {
  constructor(
    detail: string,
    readonly retryAfterS = 5,
  ) {
    super(detail);
  }
}

/** Too many requests: the caller slows down and retries after `retryAfterS` seconds. */
export class RateLimited extends DomainError {
  constructor(
    detail: string,
    readonly retryAfterS = 1,
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string) => new Invalid(detail);
export const unprocessable = (detail: string) => new Invalid(detail, 'unprocessable');
export const unauthorized = () => new Unauthorized();
export const forbidden = () => new Forbidden();
export const budgetExceeded = (detail: string) => new BudgetExceeded(detail);
export const notFound = (thing: string, resource = thing.toLowerCase()) => new NotFound(`${thing} not found`, resource);
export const conflict = (detail: string) => new Conflict(detail);
export const payloadTooLarge = (limitBytes: number) => new PayloadTooLarge(`Request body exceeds the limit of ${limitBytes} bytes`);
export const unsupportedMediaType = (got: string | undefined, expected: string) =>
  new UnsupportedMediaType(`Content-Type ${got ? `"${got}"` : '(none)'} is not supported; send ${expected}`);
export const unavailable = (detail: string, retryAfterS = 5) => new Unavailable(detail, retryAfterS);
