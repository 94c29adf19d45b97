// One call to an OpenAI-compatible chat completions endpoint (POST {base_url}/chat/completions),
// behind the webhooks' SSRF guard: every resolved address checked at connect time, no redirects
// followed, a timeout, a bounded answer. The API key goes only into the Authorization header, and
// every text that comes back (an error body may quote what it was sent) has it blanked out.
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, refusedAddress } from '../spend/webhooks.ts';
import type { ChatMessage } from '../prompts/template.ts';

export interface JudgeRequest {
  baseUrl: string;
  apiKey: string;
  model: string;
  messages: ChatMessage[];
  /** The judge prompt's config keys the endpoint understands (temperature, max_tokens, ...). */
  params: Record<string, unknown>;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface JudgeUsage {
  tokensIn: number;
  tokensOut: number;
  cachedIn: number;
  reasoning: number;
}

/** What the judge answered: its text and usage, or why there is none (retryable or not). */
export type JudgeAnswer =
  { ok: true; content: string; usage: JudgeUsage; model: string; latencyMs: number } | { ok: false; retryable: boolean; error: string };

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const PASSED_PARAMS = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'seed', 'response_format'];

/** `text` with every occurrence of the secret (and of long pieces of it) replaced. */
export function withoutSecret(text: string, secret: string): string {
  // A key of a few characters would blank out ordinary words; such a key is no secret anyway.
  if (secret.length < 4) return text;
  let out = text.split(secret).join('[redacted]');
  // Providers echo keys shortened ("sk-abc...wxyz"): blank out any 8-character piece of it.
  for (let i = 0; i + 8 <= secret.length; i++) {
    const piece = secret.slice(i, i + 8);
    if (out.includes(piece)) out = out.split(piece).join('[redacted]');
  }
  return out;
}

function errorText(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
    const msg = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof msg === 'string') return `judge answered HTTP ${status}: ${msg.slice(0, 300)}`;
  } catch {
    // not JSON
  }
  return `judge answered HTTP ${status}`;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

function parseAnswer(body: string, latencyMs: number, model: string): JudgeAnswer {
  type Completion = {
    model?: unknown;
    choices?: Array<{ message?: { content?: unknown } }>;
    usage?: {
      prompt_tokens?: unknown;
      completion_tokens?: unknown;
      prompt_tokens_details?: { cached_tokens?: unknown };
      completion_tokens_details?: { reasoning_tokens?: unknown };
    };
  };
  let parsed: Completion | null;
  try {
    parsed = JSON.parse(body) as Completion | null;
  } catch {
    return { ok: false, retryable: false, error: 'judge answer is not JSON (not a chat completion)' };
  }
  const content = parsed?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return { ok: false, retryable: false, error: 'judge answer has no choices[0].message.content' };
  const u = parsed!.usage ?? {};
  return {
    ok: true,
    content,
    model: typeof parsed!.model === 'string' && parsed!.model ? parsed!.model : model,
    latencyMs,
    usage: {
      tokensIn: num(u.prompt_tokens),
      tokensOut: num(u.completion_tokens),
      cachedIn: num(u.prompt_tokens_details?.cached_tokens),
      reasoning: num(u.completion_tokens_details?.reasoning_tokens),
    },
  };
}

/** Calls the judge once. Never throws: the answer says what happened. */
export function callJudge(r: JudgeRequest): Promise<JudgeAnswer> {
  const clean = (a: JudgeAnswer): JudgeAnswer => (a.ok ? a : { ...a, error: withoutSecret(a.error, r.apiKey) });
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: JudgeAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(clean(a));
    };
    const u = new URL(`${r.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    const refused = refusedAddress(u, r.allowPrivate);
    if (refused) {
      resolve({ ok: false, retryable: false, error: refused });
      return;
    }
    const params = Object.fromEntries(PASSED_PARAMS.filter((k) => r.params[k] !== undefined).map((k) => [k, r.params[k]]));
    const body = JSON.stringify({ model: r.model, messages: r.messages, ...params });
    const started = Date.now();
    const req = (u.protocol === 'https:' ? https : http).request(
      u,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Authorization: `Bearer ${r.apiKey}`,
          'User-Agent': 'Traceloom-Evaluators/1',
        },
        lookup: guardedLookup(r.allowPrivate) as never,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > MAX_ANSWER_BYTES) {
            res.destroy();
            done({ ok: false, retryable: false, error: `judge answer exceeds ${MAX_ANSWER_BYTES} bytes` });
          } else chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (status >= 200 && status < 300) return done(parseAnswer(text, Date.now() - started, r.model));
          if (status >= 300 && status < 400)
            return done({ ok: false, retryable: false, error: `judge answered a redirect (${status}): not followed` });
          const retryable = status === 429 || status === 408 || status >= 500;
          done({ ok: false, retryable, error: errorText(status, text) });
        });
        res.on('error', (err) => done({ ok: false, retryable: true, error: `judge answer broken off: ${err.message.slice(0, 200)}` }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, retryable: true, error: `judge call timed out after ${r.timeoutMs} ms` });
    }, r.timeoutMs);
    timer.unref();
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ ok: false, retryable: err.code !== 'EPRIVATE', error: `judge call failed: ${err.message.slice(0, 200)}` }),
    );
    req.end(body);
  });
}
