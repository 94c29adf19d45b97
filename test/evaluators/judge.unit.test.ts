// The judge's pieces without the service: the SSRF guard on the judge call, the sealing of API
// keys, the parsing of judge output against a score config, and deterministic sampling.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { Conflict } from '../../src/errors.ts';
import { callJudge, withoutSecret } from '../../src/evaluators/judge-client.ts';
import { createSecretBox } from '../../src/evaluators/secrets.ts';
import { parseJudgement } from '../../src/evaluators/judge-output.ts';
import { sampled } from '../../src/evaluators/judged-item.ts';
import type { ScoreConfig } from '../../src/scores/score-configs.ts';

const config = (c: Partial<ScoreConfig>): ScoreConfig => ({
  config_id: 'c',
  name: 'q',
  data_type: 'NUMERIC',
  min_value: 0,
  max_value: 1,
  categories: null,
  description: null,
  archived: false,
  created_at: '',
  updated_at: '',
  ...c,
});

describe('judge call: SSRF guard', () => {
  it('refuses loopback and private addresses (literal or resolved) unless allowed, before sending anything', async () => {
    let received = 0;
    const server = http.createServer((_req, res) => {
      received++;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const base = { apiKey: 'sk-unit-test-key-0123456789', model: 'm', messages: [], params: {}, timeoutMs: 2_000, allowPrivate: false };
    try {
      for (const baseUrl of [
        `http://127.0.0.1:${port}/v1`,
        `http://localhost:${port}/v1`,
        'http://169.254.169.254/v1',
        'http://[::1]:1/v1',
      ]) {
        const a = await callJudge({ ...base, baseUrl });
        expect(a.ok).toBe(false);
        expect(a.ok ? '' : a.error, baseUrl).toMatch(/refused: .* (is|resolves to) a private or loopback address/);
        expect(a.ok ? true : a.retryable).toBe(false);
      }
      expect(received).toBe(0);
      const allowed = await callJudge({ ...base, baseUrl: `http://127.0.0.1:${port}/v1`, allowPrivate: true });
      expect(allowed).toMatchObject({ ok: false, retryable: false, error: 'judge answer has no choices[0].message.content' });
      expect(received).toBe(1);
    } finally {
      server.close();
    }
  });

  it('blanks out the key, and pieces of it, in text that comes back', () => {
    const key = 'sk-abcdefghijklmnopqrstuvwxyz';
    expect(withoutSecret(`bad key ${key}!`, key)).toBe('bad key [redacted]!');
    expect(withoutSecret('bad key sk-abcdefgh...wxyz', key)).not.toContain('abcdefgh');
  });
});

describe('secret box', () => {
  it('seals with a fresh IV each time, opens with its key only, and refuses without a key', () => {
    const key = Buffer.alloc(32, 7);
    const box = createSecretBox(key);
    const a = box.seal('sk-secret');
    expect(a).not.toBe(box.seal('sk-secret'));
    expect(box.open(a)).toBe('sk-secret');
    expect(() => createSecretBox(Buffer.alloc(32, 8)).open(a)).toThrow('cannot be opened with the current SECRETS_KEY');
    const none = createSecretBox(undefined);
    expect(none.ready).toBe(false);
    expect(() => none.seal('x')).toThrow(Conflict);
  });
});

describe('judge output', () => {
  it('a JSON object with a score the config allows is a verdict; anything else is a reason', () => {
    const numeric = config({});
    expect(parseJudgement('{"score": 0.7, "reasoning": "fine"}', numeric)).toEqual({ ok: true, value: 0.7, reasoning: 'fine' });
    expect(parseJudgement('```json\n{"score": 1}\n```', numeric)).toEqual({ ok: true, value: 1, reasoning: '' });
    expect(parseJudgement('{"score": 1.5}', numeric)).toEqual({
      ok: false,
      reason: 'judge score refused by the score config: value: must be <= 1 (score config "q")',
    });
    expect(parseJudgement('{"score": "high"}', numeric)).toMatchObject({ ok: false });
    expect(parseJudgement('[1]', numeric)).toMatchObject({ ok: false, reason: /not a JSON object/ });
    expect(parseJudgement('{"score": null}', numeric)).toMatchObject({ ok: false, reason: 'malformed judge output: "score" is null' });
    expect(parseJudgement('{"score": 1, "reasoning": 3}', numeric)).toMatchObject({ ok: false });
    const cat = config({ data_type: 'CATEGORICAL', min_value: null, max_value: null, categories: ['good', 'bad'] });
    expect(parseJudgement('{"score": "good"}', cat)).toMatchObject({ ok: true, value: 'good' });
    expect(parseJudgement('{"score": "meh"}', cat)).toMatchObject({ ok: false, reason: /"meh" is not a category/ });
    const bool = config({ data_type: 'BOOLEAN', min_value: null, max_value: null });
    expect(parseJudgement('{"score": true}', bool)).toMatchObject({ ok: true, value: true });
  });

  it('sampling is a pure function of (evaluator, trace) near its rate', () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => `t-${i}`);
    const kept = ids.filter((t) => sampled('ev', t, 0.25));
    expect(kept).toEqual(ids.filter((t) => sampled('ev', t, 0.25)));
    expect(kept.length).toBeGreaterThan(400);
    expect(kept.length).toBeLessThan(600);
    expect(ids.every((t) => sampled('ev', t, 1))).toBe(true);
    expect(ids.some((t) => sampled('ev', t, 0))).toBe(false);
  });
});
