// The playground (docs/playground.md): a prompt version, or an unsaved template, rendered with the
// variables and placeholders given and sent to one to three model connections side by side. Each
// call is recorded as an execution (source `playground`, agent `playground` unless named, linked
// to the version it rendered) before it is answered, so it is priced from the price table and
// counted in spend and budgets like any call; a failed call is recorded failed, with its error.
// `prepare` does every check that can refuse (budget, prompt, variables, connections) before any
// call, so a refusal is an ordinary 4xx and a streamed answer starts only once all is in order.
// No Koa here.
import crypto from 'node:crypto';
import { badRequest, DomainError, NotFound, notFound, unprocessable } from '../errors.ts';
import type { ExecutionRecorder } from '../executions/record.ts';
import { parseVersionRef } from '../prompts/prompt-input.ts';
import { renderWhole, type PromptService } from '../prompts/service.ts';
import { placeholderProblem, type ChatMessage, type PlaceholderFill, type Template } from '../prompts/template.ts';
import type { Connections, OpenConnection } from '../evaluators/connection-repository.ts';
import { callJudge } from '../evaluators/judge-client.ts';
import { recordModelCall } from '../evaluators/model-call.ts';
import type { Logger } from '../logger.ts';

export const MAX_CONNECTIONS = 3;
const DEFAULT_TIMEOUT_MS = 60_000;

export interface PlaygroundInput {
  /** A saved version: a number, `latest` (default) or a label. */
  prompt?: { prompt_id: string; version?: number | string };
  /** Or an unsaved template: text, or chat messages with placeholders; its config as a version's. */
  template?: Template;
  config?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  placeholders?: PlaceholderFill;
  connection_ids: string[];
  agent_id?: string;
  timeout_ms?: number;
}

/** One connection's call as the answer and the stream's `result` event show it. */
export interface PlaygroundResult {
  connection_id: string;
  connection_name: string;
  provider: string;
  model: string;
  status: 'ok' | 'error';
  output: string | null;
  error: string | null;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
  cost_usd: string;
  cost_source: string;
  trace_id: string;
}

export type PlaygroundEvent =
  { event: 'delta'; data: { connection_id: string; content: string } } | { event: 'result'; data: PlaygroundResult };

export interface PlaygroundDeps {
  prompts: PromptService;
  connections: Connections;
  recorder: ExecutionRecorder;
  /** Throws 402 while the project's budget blocks (spend/budgets.ts enforce). */
  enforceBudget(projectId: string): Promise<void>;
  allowPrivate: boolean;
  logger: Logger;
}

export function createPlayground(deps: PlaygroundDeps) {
  /** The messages to send and the version they came from (none for an unsaved template). */
  async function messagesOf(projectId: string, input: PlaygroundInput) {
    if (input.prompt && input.template !== undefined) throw badRequest('prompt: give a saved prompt or a template, not both');
    if (!input.prompt && input.template === undefined) throw badRequest('prompt: give a saved prompt or a template');
    const variables = input.variables ?? {};
    const placeholders = input.placeholders ?? {};
    if (input.prompt) {
      const p = input.prompt;
      const ref = parseVersionRef(p.version ?? 'latest', 'prompt.version');
      // Renders as an agent would (the budget's block included): 404 for a prompt or version not the project's.
      const r = await deps.prompts.render(projectId, p.prompt_id, ref, variables, placeholders);
      const messages: ChatMessage[] =
        'messages' in r && r.messages ? r.messages : [{ role: 'user', content: 'text' in r ? (r.text ?? '') : '' }];
      return { messages, config: { ...r.config, ...(input.config ?? {}) }, version: { prompt_id: p.prompt_id, version: r.version } };
    }
    const problem = placeholderProblem(placeholders);
    if (problem) throw badRequest(problem);
    await deps.enforceBudget(projectId);
    const r = renderWhole(input.template!, variables, placeholders);
    const messages: ChatMessage[] = r.messages ?? [{ role: 'user', content: r.text ?? '' }];
    return { messages, config: input.config ?? {}, version: undefined };
  }

  return {
    /**
     * Every check that can refuse, then a run ready to start (its calls recorded with the caller's
     * API key, '' for other credentials, as a direct record is): `run(onEvent)` calls the
     * connections at once, records each call, and resolves with the results in the order of
     * `connection_ids` (each also given to `onEvent` as it ends, with the answer's text as it streams).
     */
    async prepare(projectId: string, input: PlaygroundInput, apiKeyId = '') {
      const ids = input.connection_ids;
      const first = new Map<string, number>();
      ids.forEach((id, i) => {
        const at = first.get(id);
        if (at !== undefined) throw unprocessable(`connection_ids[${i}]: repeats connection_ids[${at}]`);
        first.set(id, i);
      });
      const { messages, config, version } = await messagesOf(projectId, input);
      const opened: Array<OpenConnection & { id: string; name: string }> = [];
      for (const [i, id] of ids.entries()) {
        try {
          const [conn, shown] = await Promise.all([deps.connections.open(projectId, id), deps.connections.get(projectId, id)]);
          opened.push({ ...conn, id, name: shown.name });
        } catch (err) {
          if (err instanceof NotFound) throw notFound(`connection_ids[${i}]: model connection ${id}`, 'connection');
          if (err instanceof DomainError) throw unprocessable(`connection_ids[${i}]: ${err.detail}`);
          throw err;
        }
      }
      const runId = crypto.randomUUID();
      const timeoutMs = input.timeout_ms ?? DEFAULT_TIMEOUT_MS;

      async function call(conn: (typeof opened)[number], i: number, onEvent?: (e: PlaygroundEvent) => void): Promise<PlaygroundResult> {
        const started = new Date();
        const answer = await callJudge({
          baseUrl: conn.baseUrl,
          apiKey: conn.apiKey,
          model: conn.model,
          messages,
          params: config,
          timeoutMs,
          allowPrivate: deps.allowPrivate,
          who: 'model',
          ...(onEvent ? { onDelta: (content: string) => onEvent({ event: 'delta', data: { connection_id: conn.id, content } }) } : {}),
        });
        const traceId = `playground-${runId}-${i}`;
        // Recorded whatever it answered: a call that failed is a failed execution (no tokens, no cost).
        const { execution } = await recordModelCall(deps.recorder, projectId, {
          traceId,
          agentId: input.agent_id ?? 'playground',
          connection: conn,
          answer,
          started,
          messages,
          tags: ['playground'],
          metadata: { playground_run_id: runId, connection_id: conn.id },
          ...(version ? { version: { ...version, inputs: input.variables ?? {} } } : {}),
          apiKeyId,
          source: 'playground',
        });
        const result: PlaygroundResult = {
          connection_id: conn.id,
          connection_name: conn.name,
          provider: conn.provider,
          model: execution.model ?? conn.model,
          status: answer.ok ? 'ok' : 'error',
          output: answer.ok ? answer.content : null,
          error: answer.ok ? null : answer.error,
          tokens_in: execution.tokens_in,
          tokens_out: execution.tokens_out,
          latency_ms: execution.latency_ms,
          // the stored nano-dollars (a 9-decimal figure well inside a double's exact range), as a decimal string
          cost_usd: execution.cost_usd.toFixed(9).replace(/\.?0+$/, ''),
          cost_source: execution.cost_source,
          trace_id: traceId,
        };
        onEvent?.({ event: 'result', data: result });
        return result;
      }

      return {
        run_id: runId,
        prompt: version ?? null,
        messages,
        /** Streamed when `onEvent` is given (the model is asked for a stream); one answer per call otherwise. */
        async run(onEvent?: (e: PlaygroundEvent) => void) {
          try {
            return await Promise.all(opened.map((conn, i) => call(conn, i, onEvent)));
          } catch (err) {
            deps.logger.error({ err: (err as Error).message, run_id: runId }, 'playground run failed while recording its calls');
            throw err;
          }
        },
      };
    },
  };
}

export type Playground = ReturnType<typeof createPlayground>;
