// HTTP to the service: one deadline per call (timeoutMs covers every attempt and the waits
// between them, and the call settles when it passes), retries on network errors, timeouts, 429 and 5xx with exponential backoff and
// full jitter, errors typed. Only fetch, AbortController and setTimeout: Node >= 20 and browsers.
import type { ResolvedOptions } from './config.ts';
import { TraceloomApiError, TraceloomError, TraceloomUnavailableError } from './errors.ts';

export interface RequestOptions {
  query?: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/**
 * The deadline timer fires this much early (at most 20 ms, 5% of the timeout), so that the
 * rejection, scheduled behind whatever the event loop is busy with, still reaches the caller
 * within timeoutMs.
 */
const timerMarginMs = (timeoutMs: number) => Math.min(20, timeoutMs * 0.05);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Why one attempt failed in a way worth retrying, or the final answer. */
type Attempt = { ok: true; body: unknown } | { ok: false; retryable: true; reason: string; retryAfterMs?: number };

function detailOf(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string')
    return (body as { detail: string }).detail;
  return fallback;
}

export class Http {
  private projectLookup: Promise<string> | undefined;

  constructor(private readonly o: ResolvedOptions) {}

  /** A project-scoped call: `path` is relative to /api/projects/{project_id}. */
  async project<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const deadline = this.o.now() + this.o.timeoutMs;
    const projectId = await this.projectId(deadline);
    return this.call<T>(method, `/api/projects/${encodeURIComponent(projectId)}${path}`, opts, deadline);
  }

  private projectId(deadline: number): Promise<string> {
    if (this.o.projectId) return Promise.resolve(this.o.projectId);
    this.projectLookup ??= this.call<{ project_id?: string }>('GET', '/api/me/context', {}, deadline).then((me) => {
      if (!me.project_id) throw new TraceloomError('projectId: the API key names no project; pass projectId in the options');
      return me.project_id;
    });
    // A failed lookup is not kept: the next call asks again.
    return this.projectLookup.catch((e: unknown) => {
      this.projectLookup = undefined;
      throw e;
    });
  }

  /**
   * The call, settled by the deadline at the latest: a timer rejects it the moment the deadline
   * passes (and aborts the attempt in flight), so a hung service never holds the caller longer.
   */
  async call<T>(method: string, path: string, opts: RequestOptions, deadline = this.o.now() + this.o.timeoutMs): Promise<T> {
    const url = new URL(this.o.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) url.searchParams.append(k, item);
    const controller = new AbortController();
    const state = { attempts: 0, last: 'no attempt made' };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          controller.abort();
          reject(
            new TraceloomUnavailableError(
              `${method} ${path} failed after ${state.attempts} attempt(s) within ${this.o.timeoutMs} ms: ${state.last}`,
              state.attempts,
            ),
          );
        },
        Math.max(0, deadline - this.o.now() - timerMarginMs(this.o.timeoutMs)),
      );
    });
    const work = this.attempts<T>(method, path, url, opts.body, deadline, controller.signal, state);
    work.catch(() => {}); // settled after the deadline: nobody is waiting for it any more
    try {
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async attempts<T>(
    method: string,
    path: string,
    url: URL,
    body: unknown,
    deadline: number,
    signal: AbortSignal,
    state: { attempts: number; last: string },
  ): Promise<T> {
    for (;;) {
      state.attempts++;
      state.last = 'no answer by the deadline';
      const r = await this.attempt(method, url, body, signal);
      if (r.ok) return r.body as T;
      state.last = r.reason;
      if (signal.aborted) throw new TraceloomUnavailableError(`${method} ${path}: ${r.reason}`, state.attempts);
      if (state.attempts > this.o.retries)
        throw new TraceloomUnavailableError(`${method} ${path} failed after ${state.attempts} attempt(s): ${r.reason}`, state.attempts);
      const ceiling = Math.min(this.o.maxBackoffMs, this.o.backoffMs * 2 ** (state.attempts - 1));
      const wait = r.retryAfterMs !== undefined ? Math.min(r.retryAfterMs, this.o.maxBackoffMs) : Math.random() * ceiling;
      if (this.o.now() + wait >= deadline)
        throw new TraceloomUnavailableError(
          `${method} ${path} failed after ${state.attempts} attempt(s) within ${this.o.timeoutMs} ms: ${r.reason}`,
          state.attempts,
        );
      await sleep(wait);
    }
  }

  private async attempt(method: string, url: URL, body: unknown, signal: AbortSignal): Promise<Attempt> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.o.apiKey) headers['X-API-Key'] = this.o.apiKey;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      const res = await this.o.fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      if (res.ok) return { ok: true, body: parsed };
      if (res.status === 429 || res.status >= 500) {
        const seconds = Number(res.headers.get('retry-after'));
        return {
          ok: false,
          retryable: true,
          reason: `HTTP ${res.status}: ${detailOf(parsed, res.statusText)}`,
          ...(Number.isFinite(seconds) && seconds >= 0 && res.headers.has('retry-after') ? { retryAfterMs: seconds * 1000 } : {}),
        };
      }
      throw new TraceloomApiError(res.status, detailOf(parsed, res.statusText || 'no detail'), `${method} ${url.pathname}`);
    } catch (e) {
      if (e instanceof TraceloomError) throw e;
      const reason = signal.aborted
        ? 'no answer by the deadline'
        : `unreachable (${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)})`;
      return { ok: false, retryable: true, reason };
    }
  }
}
