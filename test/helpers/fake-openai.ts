// A fake OpenAI HTTP server on loopback (node:http) for end-to-end tests of real clients: it
// answers `POST /v1/chat/completions` with scripted, standard `chat.completion` bodies (one per
// request, in order) and records what it was sent. Plus the one piece of process-wide OpenTelemetry
// state such tests need: a context manager, so that the active span follows async calls.
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import { context, ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

export interface ChatToolCall {
  id: string;
  name: string;
  /** The arguments object; sent JSON-encoded as OpenAI does. */
  arguments: Record<string, unknown>;
}

export interface ScriptedAnswer {
  model: string;
  content?: string | null;
  toolCalls?: ChatToolCall[];
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; reasoning_tokens?: number };
}

export interface FakeOpenAI {
  /** Base URL to give the OpenAI client (`.../v1`). */
  baseURL: string;
  /** The parsed request bodies received, in order. */
  requests: any[];
  close(): Promise<void>;
}

/** A standard `chat.completion` object for one scripted answer. */
export function chatCompletion(a: ScriptedAnswer, n: number) {
  const toolCalls = a.toolCalls?.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  return {
    id: `chatcmpl-fake${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: a.model,
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: a.content ?? null, refusal: null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: a.usage.prompt_tokens,
      completion_tokens: a.usage.completion_tokens,
      total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens,
      prompt_tokens_details: { cached_tokens: a.usage.cached_tokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: a.usage.reasoning_tokens ?? 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
  };
}

/** Starts the fake server; each chat completion request consumes the next scripted answer. */
export async function startFakeOpenAI(answers: ScriptedAnswer[]): Promise<FakeOpenAI> {
  const requests: any[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(text),
          'x-request-id': `req_${next}`,
        });
        res.end(text);
      };
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions') {
        send(404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        send(400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } });
        return;
      }
      requests.push(body);
      const answer = answers[next];
      if (!answer) {
        send(500, { error: { message: `unexpected request #${next + 1}: only ${answers.length} answers scripted`, type: 'server_error' } });
        return;
      }
      next += 1;
      send(200, chatCompletion(answer, next));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * The context manager `NodeTracerProvider.register()` would install (AsyncLocalStorage based),
 * installed alone: the clients nest their spans through `context.active()` / `startActiveSpan`,
 * which without a context manager lose their parents; registering a global tracer provider is not
 * needed for that, the tracers are passed explicitly.
 */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const cb = thisArg == null ? fn : fn.bind(thisArg);
    return this.storage.run(ctx, cb as never, ...args);
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    // The bound function has its own `this` (the caller's), so the manager is named.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const manager = this;
    const bound = function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    };
    return bound as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** Installs the global context manager for a test file (test/file-setup.ts clears it before the next). */
export function installContextManager(): () => void {
  const installed = context.setGlobalContextManager(new AsyncLocalContextManager());
  if (!installed) throw new Error('a global OpenTelemetry context manager is already installed');
  return () => context.disable();
}
