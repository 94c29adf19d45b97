// Project prices carry user regular expressions that run against model ids on the ingest path.
// JavaScript's engine backtracks, so a repeated group that itself repeats or alternates
// ("(a+)+", "(a|a)*") can take exponential time on a crafted id. Such patterns are refused on PUT;
// with the 200-character limit on the pattern and the memo in prices.ts (one test per distinct
// model id and table load), what remains is linear-ish and bounded.

/** A reason the pattern is refused, or undefined when it is accepted. */
export function unsafeRegexReason(pattern: string): string | undefined {
  // One frame per open group: whether it contains a quantifier or an alternation.
  const stack: Array<{ risky: boolean }> = [{ risky: false }];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++; // an escaped character is a literal (or a class like \d): never a quantifier
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    const top = stack[stack.length - 1]!;
    if (c === '[') inClass = true;
    else if (c === '(') stack.push({ risky: false });
    else if (c === '|') top.risky = true;
    else if (c === '*' || c === '+' || (c === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i)))) top.risky = true;
    else if (c === ')' && stack.length > 1) {
      const group = stack.pop()!;
      const q = /^(?:[*+]|\{(\d+)(,\d*)?\})/.exec(pattern.slice(i + 1));
      const repeated = q !== null && (q[1] === undefined || q[2] !== undefined || Number(q[1]) > 1);
      if (repeated && group.risky) return 'a repeated group that itself repeats or alternates (e.g. "(a+)+" or "(a|b)*") can take exponential time';
      if (group.risky || repeated) stack[stack.length - 1]!.risky = true;
    }
  }
  return undefined;
}
