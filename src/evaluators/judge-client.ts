// One call to an OpenAI-compatible chat completions endpoint (POST {base_url}/chat/completions),
// behind the webhooks' SSRF guard: every resolved address checked at connect time, no redirects
// followed, a timeout, a bounded answer. The API key goes only into the Authorization header, and
// every text that comes back (an error body, the answer's content and model: a judge may quote
// what it was sent) leaves here through the key's redaction (key-redaction.ts). Judges call it;
// so does the playground (src/playground), streamed: the answer's text is passed on as it comes,
// redacted, a key's length behind (a key echoed across two chunks is blanked before any of it leaves).
import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
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
  /** Who is called, in error texts ("judge", "model"). */
  who?: string;
  /** Streamed: each piece of the answer's text as it arrives (redacted); the answer is still the whole. */
  onDelta?: (text: string) => void;
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

function errorText(who: string, status: number, body: string, redact: Redactor): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
    const msg = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof msg === 'string') return `${who} answered HTTP ${status}: ${redact(msg.slice(0, 300))}`;
  } catch {
    // not JSON
  }
  return `${who} answered HTTP ${status}`;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

type Usage = {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown };
  completion_tokens_details?: { reasoning_tokens?: unknown };
};

function answerOf(content: string, answered: unknown, u: Usage, latencyMs: number, model: string, redact: Redactor): JudgeAnswer {
  return {
    ok: true,
    content: redact(content),
    // A model name holding a piece of the key is not kept, even in part: the model asked for stands.
    model: typeof answered === 'string' && answered && redact(answered) === answered ? answered : model,
    latencyMs,
    usage: {
      tokensIn: num(u.prompt_tokens),
      tokensOut: num(u.completion_tokens),
      cachedIn: num(u.prompt_tokens_details?.cached_tokens),
      reasoning: num(u.completion_tokens_details?.reasoning_tokens),
    },
  };
}

function parseAnswer(who: string, body: string, latencyMs: number, model: string, redact: Redactor): JudgeAnswer {
  type Completion = { model?: unknown; choices?: Array<{ message?: { content?: unknown } }>; usage?: Usage };
  let parsed: Completion | null;
  try {
    parsed = JSON.parse(body) as Completion | null;
  } catch {
    return { ok: false, retryable: false, error: `${who} answer is not JSON (not a chat completion)` };
  }
  const content = parsed?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return { ok: false, retryable: false, error: `${who} answer has no choices[0].message.content` };
  return answerOf(content, parsed!.model, parsed!.usage ?? {}, latencyMs, model, redact);
}

/**
 * A streamed answer (`text/event-stream` of `chat.completion.chunk`s, `data: [DONE]` last): the
 * text of every chunk's choices[0].delta.content, the usage of the chunk that has it
 * (stream_options.include_usage). `push` takes the body as it arrives; `end` gives the answer.
 */
function streamedAnswer(who: string, model: string, redact: Redactor, hold: number, onDelta: (text: string) => void) {
  let pending = '';
  let content = '';
  let answered: unknown;
  let usage: Usage = {};
  let sent = '';
  let broken = false;
  // What is sent is the redacted text but its last `hold` characters: appending to the text
  // changes its redaction only there. Were it ever to change before, nothing more is sent.
  const send = (final: boolean) => {
    const text = redact(content);
    if (!text.startsWith(sent)) broken = true;
    if (broken) return;
    const upTo = final ? text.length : text.length - hold;
    if (upTo > sent.length) {
      onDelta(text.slice(sent.length, upTo));
      sent = text.slice(0, upTo);
    }
  };
  return {
    push(chunk: string) {
      pending += chunk;
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        const line = pending.slice(0, i).trim();
        pending = pending.slice(i + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') continue;
        try {
          const c = JSON.parse(data) as { model?: unknown; choices?: Array<{ delta?: { content?: unknown } }>; usage?: Usage | null };
          const piece = c.choices?.[0]?.delta?.content;
          if (typeof piece === 'string') content += piece;
          if (c.model !== undefined) answered = c.model;
          if (c.usage) usage = c.usage;
        } catch {
          // a line that is not JSON: skipped, as clients do
        }
      }
      send(false);
    },
    end(latencyMs: number): JudgeAnswer {
      send(true);
      if (!content && answered === undefined) return { ok: false, retryable: false, error: `${who} stream held no chat.completion.chunk` };
      return answerOf(content, answered, usage, latencyMs, model, redact);
    },
  };
}

/** Calls the model once. Never throws: the answer says what happened. */
export function callJudge(r: JudgeRequest): Promise<JudgeAnswer> {
  const who = r.who ?? 'judge';
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
    const streamed = r.onDelta ? { stream: true, stream_options: { include_usage: true } } : {};
    const body = JSON.stringify({ model: r.model, messages: r.messages, ...params, ...streamed });
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
        const ok = status >= 200 && status < 300;
        // A stream only when asked for and given: an endpoint that ignores `stream` answers one body.
        const stream =
          ok && r.onDelta && /^text\/event-stream/i.test(String(res.headers['content-type'] ?? ''))
            ? streamedAnswer(who, r.model, redact, 2 * Buffer.byteLength(r.apiKey) + 16, r.onDelta)
            : undefined;
        const chunks: Buffer[] = [];
        const utf8 = new StringDecoder('utf8'); // a character cut between two chunks stays whole
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > MAX_ANSWER_BYTES) {
            res.destroy();
            done({ ok: false, retryable: false, error: `${who} answer exceeds ${MAX_ANSWER_BYTES} bytes` });
          } else if (stream) stream.push(utf8.write(c));
          else chunks.push(c);
        });
        res.on('end', () => {
          if (stream) return done(stream.end(Date.now() - started));
          const text = Buffer.concat(chunks).toString('utf8');
          if (ok) {
            const answer = parseAnswer(who, text, Date.now() - started, r.model, redact);
            if (answer.ok && r.onDelta && answer.content) r.onDelta(answer.content);
            return done(answer);
          }
          if (status >= 300 && status < 400)
            return done({ ok: false, retryable: false, error: `${who} answered a redirect (${status}): not followed` });
          const retryable = status === 429 || status === 408 || status >= 500;
          done({ ok: false, retryable, error: errorText(who, status, text, redact) });
        });
        res.on('error', (err) =>
          done({ ok: false, retryable: true, error: `${who} answer broken off: ${redact(err.message.slice(0, 200))}` }),
        );
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, retryable: true, error: `${who} call timed out after ${r.timeoutMs} ms` });
    }, r.timeoutMs);
    timer.unref();
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ ok: false, retryable: err.code !== 'EPRIVATE', error: `${who} call failed: ${redact(err.message.slice(0, 200))}` }),
    );
    req.end(body);
  });
}
