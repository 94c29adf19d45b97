// One call to an OpenAI-compatible chat completions endpoint (POST {base_url}/chat/completions),
// behind the webhooks' SSRF guard: every resolved address checked at connect time, no redirects
// followed, a timeout, a bounded answer. The API key goes only into the Authorization header, and
// every text that comes back (an error body, the answer's content and model: a judge may quote
// what it was sent) leaves here through the key's redaction (key-redaction.ts).
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, refusedAddress } from '../spend/webhooks.ts';
import type { ChatMessage } from '../prompts/template.ts';
import { keyRedactor, type Redactor } from './key-redaction.ts';

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

function errorText(status: number, body: string, redact: Redactor): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
    const msg = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof msg === 'string') return `judge answered HTTP ${status}: ${redact(msg.slice(0, 300))}`;
  } catch {
    // not JSON
  }
  return `judge answered HTTP ${status}`;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

function parseAnswer(body: string, latencyMs: number, model: string, redact: Redactor): JudgeAnswer {
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
    content: redact(content),
    // A model name holding a piece of the key is not kept, even in part: the model asked for stands.
    model: typeof parsed!.model === 'string' && parsed!.model && redact(parsed!.model) === parsed!.model ? parsed!.model : model,
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
  const redact = keyRedactor(r.apiKey);
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: JudgeAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(a);
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
          if (status >= 200 && status < 300) return done(parseAnswer(text, Date.now() - started, r.model, redact));
          if (status >= 300 && status < 400)
            return done({ ok: false, retryable: false, error: `judge answered a redirect (${status}): not followed` });
          const retryable = status === 429 || status === 408 || status >= 500;
          done({ ok: false, retryable, error: errorText(status, text, redact) });
        });
        res.on('error', (err) =>
          done({ ok: false, retryable: true, error: `judge answer broken off: ${redact(err.message.slice(0, 200))}` }),
        );
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, retryable: true, error: `judge call timed out after ${r.timeoutMs} ms` });
    }, r.timeoutMs);
    timer.unref();
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ ok: false, retryable: err.code !== 'EPRIVATE', error: `judge call failed: ${redact(err.message.slice(0, 200))}` }),
    );
    req.end(body);
  });
}
