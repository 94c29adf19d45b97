// What the OTLP/HTTP routes (traces, logs, metrics) share: the project the caller writes to, the
// body read within MAX_BODY_BYTES and inflated within MAX_INFLATED_BYTES (gzip, deflate), the
// encoding chosen by Content-Type, and whether the answer is JSON.
import type { Config } from '../../config.ts';
import { ingestProjectOf } from '../../auth/principal.ts';
import { inflateBody } from '../../ingest/otlp/inflate.ts';
import { encodeExportResponse } from '../../ingest/otlp/response.ts';
import { badRequest, unsupportedMediaType } from '../errors.ts';
import { readRaw } from '../body.ts';
import type { RouteContext } from './types.ts';

const PROTOBUF = ['application/x-protobuf', 'application/protobuf'];

/** The project of an ingest request: the caller's, or the one X-Project-Id picks among several. */
export const ingestProject = (ctx: RouteContext): string => ingestProjectOf(ctx.state.principal!, ctx.get('X-Project-Id') || undefined);

export interface OtlpBody {
  isProtobuf: boolean;
  /** The inflated body. */
  body: Buffer;
  /** The body as JSON (a 400 when it does not parse); only for JSON requests. */
  json(): unknown;
}

export async function readOtlpBody(ctx: RouteContext, config: Config): Promise<OtlpBody> {
  const type = (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
  const isProtobuf = PROTOBUF.includes(type);
  const isJson = type === 'application/json' || type.endsWith('+json');
  if (!isProtobuf && !isJson)
    throw unsupportedMediaType(ctx.get('Content-Type') || undefined, 'application/x-protobuf or application/json');
  const raw = await readRaw(ctx, config.limits.maxBodyBytes);
  const body = await inflateBody(raw, ctx.get('Content-Encoding') || undefined, config.limits.maxInflatedBytes);
  return {
    isProtobuf,
    body,
    json() {
      try {
        return JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw badRequest(`Request body is not valid JSON: ${(err as Error).message}`);
      }
    },
  };
}

/**
 * The 200 answer: JSON requests, `?explain=true` and `Accept: application/json` get the JSON
 * counts; protobuf requests the OTLP Export*ServiceResponse (partial_success when items were rejected).
 */
export function answerOtlp(ctx: RouteContext, req: OtlpBody, explain: boolean, json: object, rejected = 0, errorMessage = ''): void {
  ctx.status = 200;
  if (!req.isProtobuf || explain || /application\/json/i.test(ctx.get('Accept'))) {
    ctx.body = json;
    return;
  }
  ctx.type = 'application/x-protobuf';
  ctx.body = Buffer.from(encodeExportResponse(rejected, errorMessage));
}
