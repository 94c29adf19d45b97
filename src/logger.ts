// Structured logging. Secrets never reach a log line: credentials are redacted wherever they
// could appear, and request or response bodies are never logged.
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'authorization',
  'apiKey',
  'api_key',
  'key',
  'password',
  'token',
];

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'traceloom' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Hide the password of a connection URL before it is logged or shown. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '[unparseable url]';
  }
}
