// Shared pieces: data loading with its three states, and how each state looks.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.ts';
import { local, utc } from './format.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): void;
}

/** GETs `path` (null: nothing yet) and reloads when it changes; a stale answer never wins. */
export function useApi<T>(path: string | null): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: path !== null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    const ctrl = new AbortController();
    setState((s) => ({ data: s.data, loading: true }));
    api<T>(path, { signal: ctrl.signal }).then(
      (data) => setState({ data, loading: false }),
      (err) => {
        if ((err as Error).name !== 'AbortError')
          setState({ error: err instanceof ApiError ? err : new ApiError(0, String(err)), loading: false });
      },
    );
    return () => ctrl.abort();
  }, [path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** A mutation: `run` calls the API; `error` holds the API's detail until the next run. */
export function useAction<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn(...args);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

/** A form whose submit runs `onSubmit` instead of navigating. */
export function Form({
  class: cls,
  onSubmit,
  children,
  noValidate,
}: {
  class?: string;
  onSubmit(): unknown;
  children: ComponentChildren;
  /** Leave the checks to the API (its detail is shown), not the browser's bubbles. */
  noValidate?: boolean;
}) {
  return (
    <form
      class={cls}
      noValidate={noValidate}
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    >
      {children}
    </form>
  );
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function ErrorBox({ error, title }: { error: ApiError | undefined; title?: string }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      {title && <strong>{title}: </strong>}
      <span class="detail">{error.detail}</span>
      {error.status > 0 && <span class="status"> (HTTP {error.status})</span>}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** The three states of loaded data: spinner, error with the API's detail, or the content. */
export function Load<T>({ state, children, label }: { state: Loaded<T>; children: (data: T) => ComponentChildren; label?: string }) {
  if (state.error) return <ErrorBox error={state.error} />;
  if (state.data === undefined) return <Spinner label={label} />;
  return <>{children(state.data)}</>;
}

export function Card({
  title,
  children,
  actions,
  class: cls,
}: {
  title?: ComponentChildren;
  children: ComponentChildren;
  actions?: ComponentChildren;
  class?: string;
}) {
  return (
    <section class={`card ${cls ?? ''}`}>
      {(title || actions) && (
        <header>
          {title && <h2>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

export function Stat({ label, value, title }: { label: string; value: ComponentChildren; title?: string }) {
  return (
    <div class="stat" title={title}>
      <div class="label">{label}</div>
      <div class="value">{value}</div>
    </div>
  );
}

export function Badge({ kind, children }: { kind?: string; children: ComponentChildren }) {
  return <span class={`badge ${kind ?? ''}`}>{children}</span>;
}

export function Tabs<T extends string>({ tabs, active, onChange }: { tabs: Array<[T, string]>; active: T; onChange(t: T): void }) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map(([id, label]) => (
        <button type="button" role="tab" aria-selected={active === id} class={active === id ? 'active' : ''} onClick={() => onChange(id)}>
          {label}
        </button>
      ))}
    </div>
  );
}

/** A secret shown once (API key, webhook signing secret), with a copy button. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <div>
        <strong>{label}</strong> — copy it now: it is shown this once and never again.
      </div>
      <code data-secret>{value}</code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/** An instant in the viewer's time zone, UTC on hover. */
export function Time({ iso }: { iso: string | null | undefined }) {
  return (
    <time dateTime={iso ?? undefined} title={iso ? `${utc(iso)} UTC` : undefined}>
      {local(iso)}
    </time>
  );
}
