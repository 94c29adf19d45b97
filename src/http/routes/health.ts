import type { Stores } from '../../stores/index.ts';
import type { RouteDef } from './types.ts';

export function healthRoutes(stores: Stores): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/health',
      operationId: 'getHealth',
      summary: 'State of each store (no authentication)',
      tag: 'operations',
      access: 'public',
      responses: {
        200: { description: 'Every configured store answers', schema: 'Health' },
        503: { description: 'At least one store is down; the body names it', schema: 'Health' },
      },
      async handler(ctx) {
        const health = await stores.health();
        ctx.set('Cache-Control', 'no-store');
        if (health.status === 'ok') {
          ctx.body = health;
          return;
        }
        const down = (['clickhouse', 'postgres', 'redis'] as const).filter((s) => health[s] === 'down');
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { ...health, detail: `${down.join(', ')} ${down.length > 1 ? 'are' : 'is'} down` };
      },
    },
  ];
}
