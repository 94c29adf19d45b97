// Keyboard navigation of a list: j / k move the selection down / up, Enter opens the selected row
// (its link). Keys typed into a field are left alone.
import { useEffect, useRef, useState } from 'preact/hooks';
import { navigate } from './router.tsx';

const typing = (t: EventTarget | null) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

/** The selected index among `hrefs` (-1: none yet); the row with class `selected` is scrolled into view. */
export function useListKeys(hrefs: string[]): number {
  const [selected, setSelected] = useState(-1);
  // The handler reads the selection from a ref, set with the state: a key pressed after the row is
  // drawn selected but before the effects of that render ran must still see it (Enter right after
  // k opened the row k had left).
  const current = useRef(-1);
  const select = (next: (s: number) => number) => {
    current.current = next(current.current);
    setSelected(current.current);
  };
  const key = hrefs.join('\n');
  useEffect(() => select(() => -1), [key]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (typing(e.target) || e.metaKey || e.ctrlKey || e.altKey || hrefs.length === 0) return;
      if (e.key === 'j' || e.key === 'k') {
        e.preventDefault();
        select((s) => (e.key === 'j' ? Math.min(s + 1, hrefs.length - 1) : Math.max(s - 1, 0)));
      } else if (e.key === 'Enter' && current.current >= 0) {
        e.preventDefault();
        navigate(hrefs[current.current]!);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [key]);
  useEffect(() => {
    if (selected >= 0) document.querySelector('.selected')?.scrollIntoView({ block: 'nearest' });
  }, [selected]);
  return selected;
}
