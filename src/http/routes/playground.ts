// The playground (docs/playground.md). Thin: the route table validates; src/playground/ does the
// work. `stream: true` answers `text/event-stream` once every check passed (a refusal is still a
// plain 4xx with its `detail`): `delta` events with each connection's text as it comes, a
// `result` per connection as its call ends, then `done` with the whole run.
import { PassThrough } from 'node:stream';
import type { Playground, PlaygroundEvent, PlaygroundInput } from '../../playground/playground.ts';
import { apiKeyIdOf } from '../../auth/principal.ts';
import type { RouteDef } from './types.ts';

const tag = 'playground';

export function playgroundRoutes(playground: Playground): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/projects/:project_id/playground/runs',
      operationId: 'runPlayground',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'PlaygroundRun',
      summary:
        'Send a prompt version (or an unsaved template) to 1-3 model connections side by side; each call is recorded as an execution (source playground) and priced',
      responses: {
        200: {
          description:
            "The run with every call's result (JSON); with `stream: true`, text/event-stream: `delta` {connection_id, content}, `result` (one per connection), `done` (the run)",
          schema: 'PlaygroundRunResult',
        },
        400: { description: 'Neither or both of prompt and template; bad placeholders', schema: 'Error' },
        402: { description: "The project's budget blocks (block mode)", schema: 'Error' },
        404: { description: 'No such prompt, version or label, or model connection (named)', schema: 'Error' },
        422: { description: 'Missing variables or placeholders; a connection named twice', schema: 'Error' },
      },
      async handler(ctx) {
        const { stream, ...input } = ctx.state.body as PlaygroundInput & { stream?: boolean };
        const run = await playground.prepare(ctx.state.projectId!, input, apiKeyIdOf(ctx.state.principal));
        const head = { run_id: run.run_id, prompt: run.prompt, messages: run.messages };
        if (!stream) {
          ctx.body = { ...head, results: await run.run() };
          return;
        }
        const out = new PassThrough();
        const send = (event: string, data: unknown) => out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        ctx.status = 200;
        ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
        ctx.set('Cache-Control', 'no-cache');
        ctx.set('X-Accel-Buffering', 'no');
        ctx.body = out;
        send('start', head);
        run
          .run((e: PlaygroundEvent) => send(e.event, e.data))
          .then((results) => send('done', { ...head, results }))
          .catch(() => {
            // A store failed while recording (logged): the stream says so, its status sent already.
            send('error', { detail: 'the run failed while recording its calls; see the executions list for those recorded' });
          })
          .finally(() => out.end());
      },
    },
  ];
}
