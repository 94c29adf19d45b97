import { refusalText } from '../../stores/errors.ts';
import type { StoreHealth, Stores } from '../../stores/index.ts';
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
        503: {
          description: 'A store is down or refused a write lately, or DATA_DIR is under its free-space floor; `detail` says which',
          schema: 'Health',
        },
      },
      async handler(ctx) {
        const health = await stores.health();
        ctx.set('Cache-Control', 'no-store');
        if (health.status === 'ok') {
          ctx.body = health;
          return;
        }
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { ...health, detail: healthDetail(health) };
      },
    },
  ];
}

/** "postgres is down; clickhouse is out of disk space; DATA_DIR has 1048576 bytes free, under DISK_MIN_FREE_BYTES (268435456)" */
export function healthDetail(h: StoreHealth): string {
  const parts: string[] = [];
  const down = (['clickhouse', 'postgres', 'redis'] as const).filter((s) => h[s] === 'down');
  if (down.length) parts.push(`${down.join(', ')} ${down.length > 1 ? 'are' : 'is'} down`);
  for (const r of h.refusing_writes) parts.push(refusalText(r.store, r.reason));
  const d = h.data_dir;
  if (d.free_bytes < d.min_free_bytes)
    parts.push(`DATA_DIR has ${d.free_bytes} bytes free, under DISK_MIN_FREE_BYTES (${d.min_free_bytes})`);
  return parts.join('; ');
}
