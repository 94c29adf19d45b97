// The judge's answer → a score, or the reason there is none. The answer must be one JSON object
// `{"score": …, "reasoning": "…"}` (a ```json fence around it is tolerated); the score is then
// held to the score config of the evaluator's score name, exactly as an API score would be
// (scores/score.ts scoreFields). Anything else is a failed evaluation naming the problem, never
// a guessed score. Decoding the JSON can spell out what the raw answer hid (`\u0073k-…`): every
// text taken from it (reasoning, a string score, the excerpt of a non-JSON answer) goes through
// the key's redaction (key-redaction.ts) once more.
import { DomainError } from '../errors.ts';
import { scoreFields } from '../scores/score.ts';
import type { ScoreConfig } from '../scores/score-config-repository.ts';
import type { Redactor } from './key-redaction.ts';

export type JudgeVerdict = { ok: true; value: number | boolean | string; reasoning: string } | { ok: false; reason: string };

const FENCE = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i;
const MAX_REASONING = 4_000; // what a score's comment holds (docs/scores.md)

export function parseJudgement(content: string, config: ScoreConfig, redact: Redactor): JudgeVerdict {
  const text = content.trim();
  const inner = FENCE.exec(text)?.[1] ?? text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(inner);
  } catch {
    return { ok: false, reason: `malformed judge output: not JSON (${JSON.stringify(redact(text.slice(0, 80)))})` };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return { ok: false, reason: 'malformed judge output: not a JSON object {"score": ..., "reasoning": ...}' };
  const o = parsed as Record<string, unknown>;
  if (!('score' in o)) return { ok: false, reason: 'malformed judge output: no "score"' };
  const score = typeof o.score === 'string' ? redact(o.score) : o.score;
  if (typeof score !== 'number' && typeof score !== 'boolean' && typeof score !== 'string')
    return { ok: false, reason: `malformed judge output: "score" is ${score === null ? 'null' : typeof score}` };
  if (o.reasoning !== undefined && typeof o.reasoning !== 'string')
    return { ok: false, reason: 'malformed judge output: "reasoning" is not a string' };
  try {
    scoreFields({ trace_id: 'check', name: config.name, value: score }, config, '');
  } catch (err) {
    if (err instanceof DomainError) return { ok: false, reason: `judge score refused by the score config: ${err.detail}` };
    throw err;
  }
  return { ok: true, value: score, reasoning: redact((o.reasoning as string | undefined) ?? '').slice(0, MAX_REASONING) };
}
