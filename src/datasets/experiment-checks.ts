// Deterministic checks of an experiment's answers (docs/datasets.md, "Checks"): each turns one
// answer, and the item's expected output, into a BOOLEAN score (1 passed, 0 failed) with a comment
// saying why, or into nothing when there is nothing to check against (no expected output). A
// regular expression runs in a separate context with a time limit, so a pattern that backtracks
// without end fails its check instead of stalling the process.
import vm from 'node:vm';
import { unprocessable } from '../errors.ts';
import { textOf } from '../evaluators/judged-item.ts';

export type Check =
  | { kind: 'exact_match'; score_name?: string; case_sensitive?: boolean }
  | { kind: 'contains'; score_name?: string; value?: string; case_sensitive?: boolean }
  | { kind: 'regex'; score_name?: string; pattern: string; flags?: string }
  | { kind: 'json_valid'; score_name?: string }
  | { kind: 'numeric_tolerance'; score_name?: string; tolerance: number; relative?: boolean };

export type CheckResult = { name: string; value: 0 | 1; comment: string };

const REGEX_TIME_LIMIT_MS = 250;
/** Tries of a pattern that ran out of time: a pause of the process (a GC) is not the pattern's fault. */
const REGEX_TRIES = 2;
const regexContext = vm.createContext({});
const regexTest = new vm.Script('new RegExp(pattern, flags).test(text)');

export const checkName = (c: Check): string => c.score_name ?? c.kind;

/** 422 naming the check for a pattern that does not compile. */
export function validateChecks(checks: readonly Check[]): void {
  checks.forEach((c, i) => {
    if (c.kind !== 'regex') return;
    try {
      new RegExp(c.pattern, c.flags ?? '');
    } catch (err) {
      throw unprocessable(`checks[${i}].pattern: ${(err as Error).message}`);
    }
  });
}

const fold = (s: string, caseSensitive: boolean | undefined) => (caseSensitive === false ? s.toLowerCase() : s);

/** The first number in a text (the whole text when it is one), or undefined. */
function numberIn(text: string): number | undefined {
  const whole = Number(text.trim());
  if (text.trim() !== '' && Number.isFinite(whole)) return whole;
  const m = /-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/.exec(text.replace(/(\d),(?=\d{3}\b)/g, '$1'));
  return m ? Number(m[0]) : undefined;
}

/** One check of one answer; null when the check needs an expected output and the item has none. */
export function runCheck(c: Check, output: string, expected: unknown): CheckResult | null {
  const name = checkName(c);
  const result = (ok: boolean, comment: string): CheckResult => ({ name, value: ok ? 1 : 0, comment });
  const hasExpected = expected !== null && expected !== undefined && expected !== '';
  switch (c.kind) {
    case 'exact_match': {
      if (!hasExpected) return null;
      const want = textOf(expected).trim();
      const ok = fold(output.trim(), c.case_sensitive) === fold(want, c.case_sensitive);
      return result(ok, ok ? 'the answer equals the expected output' : 'the answer differs from the expected output');
    }
    case 'contains': {
      const want = c.value ?? (hasExpected ? textOf(expected) : undefined);
      if (want === undefined) return null;
      const ok = fold(output, c.case_sensitive).includes(fold(want, c.case_sensitive));
      return result(ok, ok ? `the answer contains ${JSON.stringify(want)}` : `the answer does not contain ${JSON.stringify(want)}`);
    }
    case 'regex': {
      for (let attempt = 1; attempt <= REGEX_TRIES; attempt++) {
        try {
          const ok = regexTest.runInContext(Object.assign(regexContext, { pattern: c.pattern, flags: c.flags ?? '', text: output }), {
            timeout: REGEX_TIME_LIMIT_MS,
          }) as boolean;
          return result(ok, ok ? `the answer matches /${c.pattern}/` : `the answer does not match /${c.pattern}/`);
        } catch {
          // out of time: once more, then counted as not matching
        }
      }
      return result(false, `the pattern ran longer than ${REGEX_TIME_LIMIT_MS} ms on this answer (twice): counted as not matching`);
    }
    case 'json_valid': {
      try {
        JSON.parse(output);
        return result(true, 'the answer is valid JSON');
      } catch (err) {
        return result(false, `the answer is not valid JSON: ${(err as Error).message}`);
      }
    }
    case 'numeric_tolerance': {
      if (!hasExpected) return null;
      const want = typeof expected === 'number' ? expected : numberIn(textOf(expected));
      if (want === undefined) return result(false, 'the expected output holds no number');
      const got = numberIn(output);
      if (got === undefined) return result(false, 'the answer holds no number');
      const bound = c.relative ? c.tolerance * Math.abs(want) : c.tolerance;
      const ok = Math.abs(got - want) <= bound;
      return result(ok, `${got} is ${ok ? 'within' : 'outside'} ${c.relative ? `${c.tolerance * 100}% of` : `±${c.tolerance} of`} ${want}`);
    }
  }
}
