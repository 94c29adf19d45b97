// The judge's pieces without the service: the SSRF guard on the judge call, the sealing of API
// keys, the parsing of judge output against a score config, and deterministic sampling.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { Conflict } from '../../src/errors.ts';
import { callJudge } from '../../src/evaluators/judge-client.ts';
import { keyRedactor } from '../../src/evaluators/key-redaction.ts';
import { createSecretBox } from '../../src/evaluators/secrets.ts';
import { parseJudgement } from '../../src/evaluators/judge-output.ts';
import { sampled } from '../../src/evaluators/judged-item.ts';
import type { ScoreConfig } from '../../src/scores/score-config-repository.ts';

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
});

describe('judge call: what comes back', () => {
  it('carries no piece of the key: content, model and error text are redacted', async () => {
    const key = 'sk-Qz7Wb1xK9mTfR2vLp8Ys4Hc6';
    const server = http.createServer((req, res) => {
      const auth = req.headers.authorization ?? '';
      const ok = req.url === '/ok/chat/completions';
      res.writeHead(ok ? 200 : 400, { 'Content-Type': 'application/json' });
      const body = ok
        ? { model: `proxy ${auth}`, choices: [{ message: { content: `you sent ${auth}` } }] }
        : { error: { message: `bad ${auth}` } };
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const base = { apiKey: key, model: 'asked-model', messages: [], params: {}, timeoutMs: 2_000, allowPrivate: true };
    try {
      const ok = await callJudge({ ...base, baseUrl: `http://127.0.0.1:${port}/ok` });
      expect(ok).toMatchObject({ ok: true, content: 'you sent Bearer [redacted]', model: 'asked-model' });
      const bad = await callJudge({ ...base, baseUrl: `http://127.0.0.1:${port}/bad` });
      expect(bad).toEqual({ ok: false, retryable: false, error: 'judge answered HTTP 400: bad Bearer [redacted]' });
    } finally {
      server.close();
    }
  });
});

describe('key redaction', () => {
  const key = 'sk-proj-Qz7Wb1xK9mTfR2vLp8Ys4Hc6NdEa';
  const redact = keyRedactor(key);
  /** Whether any 4-character window of the key's secret part (after "sk-proj-") is in `text`. */
  const leaks = (text: string) => Array.from({ length: key.length - 11 }, (_, i) => key.slice(8 + i, 12 + i)).some((p) => text.includes(p));

  it('blanks out the key whole, each maximal run once', () => {
    expect(redact(`Authorization: Bearer ${key}`)).toBe('Authorization: Bearer [redacted]');
    expect(redact(`${key}${key} and ${key}`)).toBe('[redacted] and [redacted]');
  });

  it('blanks out every piece of 4 characters or more, the last 4 included', () => {
    for (const shown of [`sk-proj-Qz7W...sEa`, `sk-...HcsEa`, `key ending in ${key.slice(-4)}`, `middle ${key.slice(15, 21)} piece`])
      expect(leaks(redact(shown)), shown).toBe(false);
    expect(redact(`ends in ${key.slice(-4)}.`)).toBe('ends in [redacted].');
    // Three characters are kept: shorter windows would blank ordinary words.
    expect(redact(`ends in ${key.slice(-3)}.`)).toBe(`ends in ${key.slice(-3)}.`);
  });

  it('keeps a documented vendor prefix on its own, but not a run reaching past it', () => {
    expect(redact('the project and its sk-proj- keys')).toBe('the project and its sk-proj- keys');
    expect(leaks(redact(`sk-proj-${key.slice(8, 12)}`))).toBe(false);
  });

  it('blanks out the percent-encoded, hex and base64 forms, at any alignment in a longer text', () => {
    const odd = 'sk-Zx/9+q=Wm&Lk2%Pt';
    const r = keyRedactor(odd);
    expect(r(`?key=${encodeURIComponent(odd)}&x=1`)).toBe('?key=[redacted]&x=1');
    expect(r(`dump ${Buffer.from(odd).toString('hex')} end`)).toBe('dump [redacted] end');
    for (const before of ['', 'A', 'Au', 'Authorization: Bearer '])
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${before}${key} trailing`).toString(encoding);
        const out = redact(`headers: ${encoded}`);
        // Every 4-character window of the characters that encode the key's bytes alone is gone.
        const from = before.length;
        const core = encoded.slice(Math.ceil((8 * from) / 6), Math.floor((8 * (from + key.length)) / 6));
        const windows = Array.from({ length: core.length - 3 }, (_, i) => core.slice(i, i + 4));
        expect(
          windows.filter((w) => out.includes(w)),
          `${JSON.stringify(before)} ${encoding}`,
        ).toEqual([]);
        expect(out).toContain('[redacted]');
      }
  });

  it('leaves a key of under 4 characters, and text without the key, as it is', () => {
    expect(keyRedactor('abc')('abc abc')).toBe('abc abc');
    expect(redact('a judgement with nothing of the key')).toBe('a judgement with nothing of the key');
  });

  it("blanks out what decoding the judge's JSON spells out", () => {
    const escaped = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const verdict = parseJudgement(`{"score": 0.5, "reasoning": "sent ${escaped}"}`, config({}), redact);
    expect(verdict).toEqual({ ok: true, value: 0.5, reasoning: 'sent [redacted]' });
    const cat = config({ data_type: 'CATEGORICAL', min_value: null, max_value: null, categories: ['good'] });
    const refused = parseJudgement(`{"score": "${escaped}"}`, cat, redact);
    expect(refused.ok ? '' : refused.reason).toMatch(/"\[redacted\]" is not a category/);
    const notJson = parseJudgement(`Bearer ${key}`, config({}), redact);
    expect(notJson).toEqual({ ok: false, reason: 'malformed judge output: not JSON ("Bearer [redacted]")' });
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

const none = (text: string) => text;

describe('judge output', () => {
  it('a JSON object with a score the config allows is a verdict; anything else is a reason', () => {
    const numeric = config({});
    expect(parseJudgement('{"score": 0.7, "reasoning": "fine"}', numeric, none)).toEqual({ ok: true, value: 0.7, reasoning: 'fine' });
    expect(parseJudgement('```json\n{"score": 1}\n```', numeric, none)).toEqual({ ok: true, value: 1, reasoning: '' });
    expect(parseJudgement('{"score": 1.5}', numeric, none)).toEqual({
      ok: false,
      reason: 'judge score refused by the score config: value: must be <= 1 (score config "q")',
    });
    expect(parseJudgement('{"score": "high"}', numeric, none)).toMatchObject({ ok: false });
    expect(parseJudgement('[1]', numeric, none)).toMatchObject({ ok: false, reason: /not a JSON object/ });
    expect(parseJudgement('{"score": null}', numeric, none)).toMatchObject({
      ok: false,
      reason: 'malformed judge output: "score" is null',
    });
    expect(parseJudgement('{"score": 1, "reasoning": 3}', numeric, none)).toMatchObject({ ok: false });
    const cat = config({ data_type: 'CATEGORICAL', min_value: null, max_value: null, categories: ['good', 'bad'] });
    expect(parseJudgement('{"score": "good"}', cat, none)).toMatchObject({ ok: true, value: 'good' });
    expect(parseJudgement('{"score": "meh"}', cat, none)).toMatchObject({ ok: false, reason: /"meh" is not a category/ });
    const bool = config({ data_type: 'BOOLEAN', min_value: null, max_value: null });
    expect(parseJudgement('{"score": true}', bool, none)).toMatchObject({ ok: true, value: true });
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
