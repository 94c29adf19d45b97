// prompts.get: an in-memory cache per (name, reference). Fresh: served with no request. Stale
// (past its TTL): served at once while one background refresh runs for that key, never more
// (no stampede). Missing: one request per key, shared by every concurrent caller. When the
// service is unreachable or answers 5xx: the cached version (however old), else the fallback
// given, else a TraceloomPromptUnavailableError saying so. A 4xx (unknown prompt, bad key) is a
// TraceloomApiError: a fallback does not hide a mistake.
import type { Template } from './compile.ts';
import type { ResolvedOptions } from './config.ts';
import { TraceloomPromptUnavailableError, TraceloomUnavailableError } from './errors.ts';
import type { Http } from './http.ts';
import { fallbackPrompt, Prompt, type PromptVersionBody } from './prompt.ts';

export interface GetPromptOptions {
  /** A label (e.g. "production"); default: the latest version. */
  label?: string;
  /** A version number; takes precedence over label. */
  version?: number;
  /** How long a fetched version is served without asking again (default: the client's, 60). */
  cacheTtlSeconds?: number;
  /** Served (isFallback: true) when the service is unavailable and nothing is cached. */
  fallback?: Template;
  /** The fallback's config (model parameters). */
  fallbackConfig?: Record<string, unknown>;
}

interface Entry {
  prompt: Prompt;
  expiresAt: number;
  refresh?: Promise<void>;
}

/** After a failed background refresh, the next one waits this long (the stale copy keeps serving). */
const REFRESH_RETRY_MS = 1000;

export class PromptClient {
  private readonly cache = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Prompt>>();

  constructor(
    private readonly http: Http,
    private readonly o: ResolvedOptions,
  ) {}

  async get(name: string, options: GetPromptOptions = {}): Promise<Prompt> {
    const ref = options.version !== undefined ? String(options.version) : (options.label ?? 'latest');
    const key = `${name}\u0000${ref}`;
    const ttlMs = (options.cacheTtlSeconds ?? this.o.cacheTtlSeconds) * 1000;
    const hit = this.cache.get(key);
    if (hit) {
      if (this.o.now() >= hit.expiresAt && !hit.refresh) this.refreshInBackground(key, name, ref, ttlMs, hit);
      return hit.prompt;
    }
    try {
      return await this.load(key, name, ref, ttlMs);
    } catch (e) {
      if (!(e instanceof TraceloomUnavailableError)) throw e;
      const late = this.cache.get(key); // filled meanwhile by another caller
      if (late) return late.prompt;
      if (options.fallback !== undefined) return fallbackPrompt(name, options.fallback, options.fallbackConfig);
      throw new TraceloomPromptUnavailableError(name, ref, e);
    }
  }

  /** Drops every cached prompt (or one name's): the next get asks the service. */
  invalidate(name?: string): void {
    for (const key of this.cache.keys()) if (name === undefined || key.startsWith(`${name}\u0000`)) this.cache.delete(key);
  }

  /** Settles when the background refreshes running now are done (for tests and shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.cache.values()].map((e) => e.refresh));
  }

  private load(key: string, name: string, ref: string, ttlMs: number): Promise<Prompt> {
    let p = this.loading.get(key);
    if (!p) {
      p = this.fetch(name, ref)
        .then((prompt) => {
          this.cache.set(key, { prompt, expiresAt: this.o.now() + ttlMs });
          return prompt;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }

  private refreshInBackground(key: string, name: string, ref: string, ttlMs: number, entry: Entry): void {
    entry.refresh = this.fetch(name, ref).then(
      (prompt) => {
        this.cache.set(key, { prompt, expiresAt: this.o.now() + ttlMs });
      },
      (e: unknown) => {
        entry.expiresAt = this.o.now() + Math.min(REFRESH_RETRY_MS, ttlMs);
        entry.refresh = undefined;
        this.o.onBackgroundError(e);
      },
    );
  }

  private async fetch(name: string, ref: string): Promise<Prompt> {
    const body = await this.http.project<PromptVersionBody>(
      'GET',
      `/prompts/${encodeURIComponent(name)}/versions/${encodeURIComponent(ref)}`,
    );
    return new Prompt(body);
  }
}
