// HTTP to the service: one deadline per call (timeoutMs covers every attempt and the waits
// between them), retries on network errors, timeouts, 429 and 5xx with exponential backoff and
// full jitter, errors typed. Only fetch, AbortController and setTimeout: Node >= 20 and browsers.
import type { ResolvedOptions } from './config.ts';
import { TraceloomApiError, TraceloomError, TraceloomUnavailableError } from './errors.ts';

export interface RequestOptions {
  query?: Record<string, string | string[] | undefined>;
  body?: unknown;
}

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

  async call<T>(method: string, path: string, opts: RequestOptions, deadline = this.o.now() + this.o.timeoutMs): Promise<T> {
    const url = new URL(this.o.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) url.searchParams.append(k, item);
    let last = 'no attempt made';
    for (let attempt = 0; ; attempt++) {
      const left = deadline - this.o.now();
      if (left <= 0) throw new TraceloomUnavailableError(`${method} ${path} timed out after ${this.o.timeoutMs} ms (${last})`, attempt);
      const r = await this.attempt(method, url, opts.body, left);
      if (r.ok) return r.body as T;
      last = r.reason;
      if (attempt >= this.o.retries)
        throw new TraceloomUnavailableError(`${method} ${path} failed after ${attempt + 1} attempt(s): ${r.reason}`, attempt + 1);
      const ceiling = Math.min(this.o.maxBackoffMs, this.o.backoffMs * 2 ** attempt);
      const wait = r.retryAfterMs !== undefined ? Math.min(r.retryAfterMs, this.o.maxBackoffMs) : Math.random() * ceiling;
      if (this.o.now() + wait >= deadline)
        throw new TraceloomUnavailableError(
          `${method} ${path} failed after ${attempt + 1} attempt(s) within ${this.o.timeoutMs} ms: ${r.reason}`,
          attempt + 1,
        );
      await sleep(wait);
    }
  }

  private async attempt(method: string, url: URL, body: unknown, timeoutMs: number): Promise<Attempt> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.o.apiKey) headers['X-API-Key'] = this.o.apiKey;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      const res = await this.o.fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal,
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
      const reason = controller.signal.aborted
        ? `no answer within ${timeoutMs} ms`
        : `unreachable (${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)})`;
      return { ok: false, retryable: true, reason };
    } finally {
      clearTimeout(timer);
    }
  }
}
