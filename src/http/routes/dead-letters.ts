// A project's ingest dead letters (docs/traces.md, "Dead letters"): records of the ingest log that
// failed alone while the stores answered, set aside so they never block ingest. Admins list them
// with their error, replay them once fixed, or purge them. Thin: src/ingest/dead-letter-service.ts.
import type { DeadLetterService } from '../../ingest/dead-letter-service.ts';
import type { RouteDef } from './types.ts';

const P = '/api/projects/:project_id/ingest/dead-letters';
const tag = 'traces';

export function deadLetterRoutes(deadLetters: DeadLetterService): RouteDef[] {
  return [
    {
      method: 'GET',
      path: P,
      operationId: 'listDeadLetters',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: "The project's ingest records set aside as dead letters on this node, oldest first, each with its error",
      responses: { 200: { description: 'The dead letters', schema: 'DeadLetterList' } },
      async handler(ctx) {
        ctx.body = { items: deadLetters.list(ctx.state.projectId!) };
      },
    },
    {
      method: 'POST',
      path: `${P}/:dead_letter_id/replay`,
      operationId: 'replayDeadLetter',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Append a dead letter to the ingest log again (it is loaded like any record, and set aside again if it still fails)',
      responses: {
        202: { description: 'Appended to the ingest log (durable); the dead letter is gone', schema: 'DeadLetterReplayed' },
        404: { description: 'No such dead letter in this project on this node', schema: 'Error' },
        503: { description: 'The ingest log cannot take it now; retry after Retry-After', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.status = 202;
        ctx.body = await deadLetters.replay(ctx.state.projectId!, ctx.params.dead_letter_id!);
      },
    },
    {
      method: 'DELETE',
      path: `${P}/:dead_letter_id`,
      operationId: 'purgeDeadLetter',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Purge a dead letter: its spans are dropped for good',
      responses: {
        204: { description: 'Purged' },
        404: { description: 'No such dead letter in this project on this node', schema: 'Error' },
      },
      async handler(ctx) {
        deadLetters.purge(ctx.state.projectId!, ctx.params.dead_letter_id!);
        ctx.status = 204;
      },
    },
  ];
}
