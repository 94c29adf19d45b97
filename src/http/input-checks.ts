// What no input may carry, whatever its schema says, decided once for all text and numbers of a
// request (path parameters, query parameters, JSON bodies at any depth, keys included):
//  - NUL (U+0000): PostgreSQL text and jsonb cannot hold it ("invalid byte sequence ... 0x00");
//  - a lone surrogate (U+D800..U+DFFF unpaired): not a Unicode scalar value, jsonb refuses its
//    escape, and UTF-8 cannot encode it (it would silently become U+FFFD on the way to a store);
//  - a number that is not finite: JSON.parse turns 1e400 into Infinity, which no store holds;
//  - nesting deeper than MAX_JSON_DEPTH: recursion further on (ajv, JSON.stringify, jsonb) would
//    overflow the stack or be refused by the store.
// Pure functions, no Koa: the validator (validation.ts) calls them and turns problems into a 400.

/** Deeper than any prompt config, template, metadata or render input we have seen by far. */
export const MAX_JSON_DEPTH = 64;

/** At most this many problems are listed in one detail; the first ones name where to look. */
const MAX_PROBLEMS = 10;

/** Why a string cannot be stored, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return 'must not contain NUL (U+0000)';
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a surrogate pair: one astral character
        continue;
      }
      return `must not contain a lone surrogate (U+${c.toString(16).toUpperCase()})`;
    }
  }
  return undefined;
}

/**
 * How validation messages name a place in a value: `a.b.0.c`; `what` when the value itself is at
 * fault. In a batch (an array body whose route names its items, e.g. `scores`) an item is
 * `scores[1]` and the batch itself `scores`, as the domain's own messages name them
 * (`scores[1].value: …`): one form for the schema's and the domain's problems.
 */
export function fieldName(path: readonly (string | number)[], what: string, batch?: string): string {
  if (batch === undefined) return path.length ? path.join('.') : what;
  if (path.length === 0) return batch;
  const [item, ...rest] = path;
  return [`${batch}[${item}]`, ...rest].join('.');
}

/**
 * Every problem of `value` (a parsed JSON document, or query parameters): text that cannot be
 * stored, numbers that are not finite, nesting over MAX_JSON_DEPTH. Iterative, so a hostile depth
 * cannot overflow the stack here. `what` names the whole value ("body"); `at` is the path of `value` itself;
 * `batch` names the items of an array body (fieldName).
 */
export function inputProblems(value: unknown, what: string, at: readonly (string | number)[] = [], batch?: string): string[] {
  const problems: string[] = [];
  const stack: Array<{ v: unknown; path: (string | number)[] }> = [{ v: value, path: [...at] }];
  while (stack.length > 0 && problems.length < MAX_PROBLEMS) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const p = textProblem(v);
      if (p) problems.push(`${fieldName(path, what, batch)}: ${p}`);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) problems.push(`${fieldName(path, what, batch)}: must be a finite number`);
    } else if (v !== null && typeof v === 'object') {
      if (path.length - at.length >= MAX_JSON_DEPTH) {
        problems.push(`${fieldName(path, what, batch)}: nested deeper than ${MAX_JSON_DEPTH} levels`);
        continue;
      }
      const entries: Array<[string | number, unknown]> = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
      // Pushed in reverse, so problems come out in document order.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        if (typeof k === 'string') {
          const p = textProblem(k);
          // The key itself is not echoed: it is the part that cannot be shown or stored.
          if (p) {
            problems.push(`${fieldName(path, what, batch)}: a key ${p}`);
            continue;
          }
        }
        stack.push({ v: child, path: [...path, k] });
      }
    }
  }
  return [...new Set(problems)];
}
