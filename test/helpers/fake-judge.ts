// An OpenAI-compatible judge on loopback (node:http) for the evaluator tests: every
// `POST /v1/chat/completions` is answered by a script that reads the request (the rendered judge
// prompt) and says what to do — a judgement, a malformed answer, a 429 or 500, or a slow answer
// (longer than the evaluator's timeout). It records every request with its headers. A request with
// `stream: true` is answered as a stream of chat.completion.chunk events (the playground's calls).
import http from 'node:http';
import { chatCompletion } from './fake-openai.ts';

export type JudgeReply =
  | { kind: 'judgement'; content: string; promptTokens?: number; completionTokens?: number; delayMs?: number }
  | { kind: 'status'; status: number; message: string };

export interface JudgeRequestSeen {
  headers: http.IncomingHttpHeaders;
  body: { model: string; messages: Array<{ role: string; content: string }>; [k: string]: unknown };
  /** The text of every message, joined: what the script usually looks at. */
  text: string;
}

export interface FakeJudge {
  /** `.../v1`: a connection's base_url. */
  baseURL: string;
  requests: JudgeRequestSeen[];
  /** The most requests it held at once (delayed answers): the concurrency the caller achieved. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/** A judgement as a judge should give it. */
export const verdict = (score: unknown, reasoning = 'because'): JudgeReply & { kind: 'judgement' } => ({
  kind: 'judgement',
  content: JSON.stringify({ score, reasoning }),
});

export async function startFakeJudge(script: (req: JudgeRequestSeen, n: number) => JudgeReply, model = 'judge-model'): Promise<FakeJudge> {
  const requests: JudgeRequestSeen[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        if (res.destroyed) return;
        const text = JSON.stringify(body);
        res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      };
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions')
        return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JudgeRequestSeen['body'];
      const seen = { headers: req.headers, body, text: body.messages.map((m) => m.content).join('\n') };
      requests.push(seen);
      const reply = script(seen, requests.length);
      if (reply.kind === 'status') return send(reply.status, { error: { message: reply.message, type: 'scripted' } });
      const n = requests.length;
      const usage = { prompt_tokens: reply.promptTokens ?? 100, completion_tokens: reply.completionTokens ?? 20 };
      const answer = () => {
        if (!body.stream) return send(200, chatCompletion({ model, content: reply.content, usage }, n));
        // Streamed as OpenAI does: chunks of a few characters, the usage chunk last when asked for, then [DONE].
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        const chunk = (delta: object, extra: object = {}) =>
          `data: ${JSON.stringify({ id: `chatcmpl-fake${n}`, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
        let out = chunk({ role: 'assistant', content: '' });
        for (let i = 0; i < reply.content.length; i += 3) out += chunk({ content: reply.content.slice(i, i + 3) });
        const options = body.stream_options as { include_usage?: boolean } | undefined;
        if (options?.include_usage)
          out += `data: ${JSON.stringify({ id: `chatcmpl-fake${n}`, object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`;
        out += 'data: [DONE]\n\n';
        // written in pieces of 7 bytes, so that events and characters are cut between writes
        const bytes = Buffer.from(out, 'utf8');
        for (let i = 0; i < bytes.length; i += 7) res.write(bytes.subarray(i, i + 7));
        res.end();
      };
      if (!reply.delayMs) return answer();
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      const t = setTimeout(() => {
        timers.delete(t);
        inFlight--;
        answer();
      }, reply.delayMs);
      timers.add(t);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Creates a model connection to `judge` (model judge-model) through `call` (a project's API); returns its id. */
export async function connectJudge(
  call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>,
  judge: FakeJudge,
  apiKey: string,
): Promise<string> {
  const conn = await call('POST', '/model-connections', {
    name: 'loopback judge',
    base_url: judge.baseURL,
    model: 'judge-model',
    api_key: apiKey,
  });
  if (conn.status !== 201) throw new Error(`model connection refused: ${JSON.stringify(conn.body)}`);
  return conn.body.connection_id as string;
}
