// Reading request bodies with a byte limit, before anything is parsed.
import type Koa from 'koa';
import { badRequest, payloadTooLarge, unsupportedMediaType } from './errors.ts';

export async function readRaw(ctx: Koa.Context, limitBytes: number): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > limitBytes) {
    // Answer without reading a body we will refuse anyway.
    ctx.req.resume();
    throw payloadTooLarge(limitBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) {
      ctx.req.resume();
      throw payloadTooLarge(limitBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

/** A JSON request body: 415 for another content type, 413 over the limit, 400 when it does not parse. */
export async function readJson(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!ctx.is('application/json', '+json')) throw unsupportedMediaType(ctx.get('Content-Type') || undefined, 'application/json');
  const raw = await readRaw(ctx, limitBytes);
  if (raw.length === 0) throw badRequest('Request body is empty; send a JSON document');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw badRequest(`Request body is not valid JSON: ${(err as Error).message}`);
  }
}
