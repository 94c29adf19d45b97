// A small history router: the path picks the page, the query string holds its state (filters,
// cursor, tab), so every view is a link that can be shared or reloaded.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  params: URLSearchParams;
}

const listeners = new Set<() => void>();
const current = (): Location => ({ path: location.pathname, params: new URLSearchParams(location.search) });

export function navigate(url: string, opts: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
}

window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return loc;
}

/** Same page with some query parameters changed (null or '' removes one). */
export function withParams(loc: Location, changes: Record<string, string | null | undefined>): string {
  const p = new URLSearchParams(loc.params);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === '') p.delete(k);
    else p.set(k, v);
  }
  const s = p.toString();
  return s ? `${loc.path}?${s}` : loc.path;
}

export function Link({
  href,
  children,
  class: cls,
  title,
  current,
}: {
  href: string;
  children: ComponentChildren;
  class?: string;
  title?: string;
  /** The link to the page shown (aria-current). */
  current?: boolean;
}) {
  return (
    <a
      href={href}
      class={cls}
      title={title}
      aria-current={current ? 'page' : undefined}
      onClick={(e: MouseEvent) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
