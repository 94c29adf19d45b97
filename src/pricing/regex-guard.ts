// Project prices carry user regular expressions that run against model ids on the ingest path.
// JavaScript's engine backtracks, so some patterns take exponential time on a crafted id (a
// repeated group that itself repeats or alternates: "(a+)+", "(a|a)*") and others polynomial time
// (several unbounded quantifiers that can share characters: "^.*.*.*.*.*X$", "^\d*\d*\d*$"). Such
// patterns are refused on PUT by shape: at most one unbounded quantifier (*, +, {n,}) outside
// character classes, and no repeated group containing a quantifier or an alternation. What passes
// is then timed against adversarial inputs (refused above 5 ms). At run time a model id longer
// than 256 characters is never tested against a regex (prices.ts), and the memo there runs a regex
// once per distinct model id and table load.
import { Worker } from 'node:worker_threads';

/** Model ids longer than this are never tested against a project regex (exact keys still apply). */
export const MAX_REGEX_INPUT = 256;
/** A pattern that takes longer than this on any adversarial input is refused at PUT. */
export const MAX_REGEX_MS = 5;

/** A reason the pattern is refused, or undefined when it is accepted. */
export function unsafeRegexReason(pattern: string): string | undefined {
  // One frame per open group: whether it contains a quantifier or an alternation.
  const stack: Array<{ risky: boolean }> = [{ risky: false }];
  let inClass = false;
  let unbounded = 0;
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
    const brace = c === '{' ? /^\{\d+(,(\d*))?\}/.exec(pattern.slice(i)) : null;
    if (c === '[') inClass = true;
    else if (c === '(') stack.push({ risky: false });
    else if (c === '|') top.risky = true;
    else if (c === '*' || c === '+' || brace) {
      top.risky = true;
      if (c !== '{' || (brace![1] !== undefined && brace![2] === '')) unbounded++;
      if (unbounded > 1)
        return 'at most one unbounded quantifier (*, + or {n,}) is allowed: several can take polynomial time (e.g. "^.*.*.*X$")';
    } else if (c === ')' && stack.length > 1) {
      const group = stack.pop()!;
      const q = /^(?:[*+]|\{(\d+)(,\d*)?\})/.exec(pattern.slice(i + 1));
      // "?" and "{0,1}" are optional, not repeated; "{2}", "{1,3}", "{1,}", "*", "+" repeat.
      const repeated =
        q !== null && (q[1] === undefined || (q[2] !== undefined ? q[2] === ',' || Number(q[2].slice(1)) > 1 : Number(q[1]) > 1));
      if (repeated && group.risky)
        return 'a repeated group that itself repeats or alternates (e.g. "(a+)+" or "(a|b)*") can take exponential time';
      if (group.risky || repeated) stack[stack.length - 1]!.risky = true;
    }
  }
  return undefined;
}

/** Inputs that make a backtracking pattern work hardest: long runs of what it matches, then a mismatch. */
function adversarialInputs(pattern: string): string[] {
  const literals = [...new Set(pattern.replace(/\\[dDwWsSbB]/g, '').replace(/[\\^$.*+?()[\]{}|]/g, ''))].join('');
  const runs = ['a', '0', '-', ' ', 'a0-.', literals || 'x'];
  const out: string[] = [];
  for (const r of runs) {
    const body = r.repeat(Math.ceil(MAX_REGEX_INPUT / r.length)).slice(0, MAX_REGEX_INPUT - 1);
    out.push(`${body}!`, `${body}\u0000`, body);
  }
  return out;
}

// Timing runs in a worker thread: a pattern that backtracks for minutes cannot be interrupted on
// the thread running it, so the worker is terminated at the deadline instead.
const TIMER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const re = new RegExp(workerData.pattern);
let worst = 0;
for (const input of workerData.inputs) {
  let best = Infinity;
  for (let run = 0; run < 2 && best > workerData.limit; run++) {
    const t0 = performance.now();
    re.test(input);
    best = Math.min(best, performance.now() - t0);
  }
  worst = Math.max(worst, best);
  if (worst > workerData.limit) break;
}
parentPort.postMessage(worst);
`;
const TIMER_DEADLINE_MS = 1_000;

/**
 * Milliseconds the slowest adversarial input took (the best of two runs, to discount a busy
 * moment); Infinity when the run did not finish within a second. The pattern must compile.
 */
export function slowestRegexMs(pattern: string): Promise<number> {
  return new Promise((resolve) => {
    const worker = new Worker(TIMER_SOURCE, {
      eval: true,
      workerData: { pattern, inputs: adversarialInputs(pattern), limit: MAX_REGEX_MS },
    });
    let settled = false;
    const done = (ms: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(ms);
    };
    const timer = setTimeout(() => done(Infinity), TIMER_DEADLINE_MS);
    worker.once('message', (ms: number) => done(ms));
    worker.once('error', () => done(Infinity));
    worker.once('exit', () => done(Infinity));
  });
}

/** A reason the pattern is refused for its running time on adversarial model ids, or undefined. */
export async function slowRegexReason(pattern: string): Promise<string | undefined> {
  const ms = await slowestRegexMs(pattern);
  if (ms <= MAX_REGEX_MS) return undefined;
  const took = Number.isFinite(ms) ? `${ms.toFixed(1)} ms` : `more than ${TIMER_DEADLINE_MS} ms`;
  return `takes ${took} on an adversarial model id of ${MAX_REGEX_INPUT} characters (at most ${MAX_REGEX_MS} ms); simplify the pattern`;
}
