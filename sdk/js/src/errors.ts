// Typed errors. Every error says what failed and why; `kind` lets callers branch without
// instanceof across bundles.

/** Base of every error the SDK throws. */
export class TraceloomError extends Error {
  readonly kind: string = 'traceloom';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TraceloomError';
  }
}

/** The service answered with a 4xx: the request is wrong (bad key, unknown prompt...); retrying will not help. */
export class TraceloomApiError extends TraceloomError {
  override readonly kind = 'api';
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly path: string,
  ) {
    super(`Traceloom answered ${status} to ${path}: ${detail}`);
    this.name = 'TraceloomApiError';
  }
}

/** The service could not be reached (network error, timeout) or answered 5xx after every retry. */
export class TraceloomUnavailableError extends TraceloomError {
  override readonly kind = 'unavailable';
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TraceloomUnavailableError';
  }
}

/** A prompt could not be served: not cached, no fallback given, and the service unavailable. */
export class TraceloomPromptUnavailableError extends TraceloomUnavailableError {
  constructor(
    readonly promptName: string,
    readonly reference: string,
    cause: TraceloomUnavailableError,
  ) {
    super(
      `prompt "${promptName}" (${reference}) could not be served: no cached version, no fallback given, and ${cause.message}`,
      cause.attempts,
      { cause },
    );
    this.name = 'TraceloomPromptUnavailableError';
  }
}

/** compile() refused its arguments, with the status and detail the server's render answers. */
export class TraceloomCompileError extends TraceloomError {
  override readonly kind = 'compile';
  constructor(
    readonly status: 400 | 422,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'TraceloomCompileError';
  }
}
