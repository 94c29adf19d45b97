// Shared pieces: data loading with its three states, and how each state looks.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from './api.ts';
import { clock, instant, local, localOffset, onClockChange, setClock, utc, zoneName, type Clock } from './format.ts';

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

/** A filter form's Apply (its submit) and Reset buttons. */
export function ApplyReset({ onReset }: { onReset(): void }) {
  return (
    <div class="apply">
      <button type="submit" class="primary">
        Apply
      </button>
      <button type="button" onClick={onReset}>
        Reset
      </button>
    </div>
  );
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

/** The console's clock (format.ts): a component that shows instants redraws when it is switched. */
export function useClock(): Clock {
  const [c, setC] = useState(clock);
  useEffect(() => {
    setC(clock());
    return onClockChange(() => setC(clock()));
  }, []);
  return c;
}

/**
 * An instant on the console's clock. `bare`: no zone after it (a table whose header carries
 * <Zone />); otherwise the zone follows, small. The hover title gives it in both zones.
 */
export function Time({ iso, bare }: { iso: string | null | undefined; bare?: boolean }) {
  const c = useClock();
  if (!iso) return <span class="muted">—</span>;
  const d = new Date(iso);
  const valid = !Number.isNaN(d.getTime());
  return (
    <time
      dateTime={valid ? d.toISOString() : undefined}
      title={valid ? `${utc(iso)} UTC · ${local(iso)} local (${localOffset(d)})` : undefined}
    >
      {instant(iso, c)}
      {!bare && valid && <span class="zone"> {c === 'utc' ? 'UTC' : localOffset(d)}</span>}
    </time>
  );
}

/** The clock's zone in parentheses, for a column header or a field label: "(local, UTC+01:00)", "(UTC)". */
export function Zone() {
  const c = useClock();
  return <span class="zone">({zoneName(c)})</span>;
}

/** The Local / UTC switch of the console's clock (in the shell). */
export function ClockToggle() {
  const c = useClock();
  return (
    <div class="clock-toggle" role="group" aria-label="Time zone of the times shown">
      <span aria-hidden="true">Times</span>
      {(['local', 'utc'] as const).map((z) => (
        <button
          type="button"
          aria-pressed={c === z}
          class={c === z ? 'active' : ''}
          title={z === 'local' ? `Your time zone (${localOffset()})` : 'Coordinated Universal Time'}
          onClick={() => setClock(z)}
        >
          {z === 'local' ? 'Local' : 'UTC'}
        </button>
      ))}
    </div>
  );
}

/**
 * A table's horizontal scroll box: the table may be wider than the screen, the page never is. When
 * it does scroll it is a tab stop (keyboard users scroll it with the arrow keys), named by `label`.
 */
export function TableScroll({ children, label, class: cls }: { children: ComponentChildren; label?: string; class?: string }) {
  const el = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const box = el.current;
    if (!box) return;
    const measure = () => setScrolls(box.scrollWidth > box.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    if (box.firstElementChild) observer.observe(box.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={el}
      class={`table-scroll ${cls ?? ''}`}
      tabIndex={scrolls ? 0 : undefined}
      role={scrolls ? 'region' : undefined}
      aria-label={scrolls ? (label ?? 'Table (scrolls sideways)') : undefined}
    >
      {children}
    </div>
  );
}
