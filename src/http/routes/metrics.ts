// GET /metrics: the service's own metrics in Prometheus text format (src/metrics.ts). Open like
// /api/health unless METRICS_TOKEN is set; then a scraper sends it as a bearer token.
import crypto from 'node:crypto';
import type { Config } from '../../config.ts';
import type { Metrics } from '../../metrics.ts';
import { HttpError } from '../errors.ts';
import type { RouteDef } from './types.ts';

function sameToken(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function metricsRoutes(config: Config, metrics: Metrics): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      operationId: 'getMetrics',
      tag: 'operations',
      access: 'public',
      summary: "The service's metrics in Prometheus text format (bearer METRICS_TOKEN when set)",
      responses: {
        200: { description: 'Prometheus text exposition format 0.0.4', contentType: 'text/plain' },
        401: { description: 'METRICS_TOKEN is set and the request does not carry it', schema: 'Error' },
      },
      async handler(ctx) {
        if (config.metricsToken !== undefined) {
          const m = /^Bearer (.+)$/i.exec(ctx.get('Authorization'));
          if (!m || !sameToken(m[1]!, config.metricsToken)) {
            ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
            throw new HttpError(401, 'GET /metrics needs the METRICS_TOKEN as `Authorization: Bearer <token>`');
          }
        }
        ctx.type = metrics.registry.contentType;
        ctx.body = await metrics.registry.metrics();
      },
    },
  ];
}
