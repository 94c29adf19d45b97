// Content-Encoding for trace bodies: gzip (the Collector's default) and deflate. The inflated
// size is counted chunk by chunk and the stream is destroyed the moment it passes the limit, so a
// decompression bomb costs at most `maxInflatedBytes` of memory and the time to produce it.
import zlib from 'node:zlib';
import { badRequest, PayloadTooLarge, UnsupportedMediaType } from '../../errors.ts';

const SUPPORTED = new Set(['gzip', 'x-gzip', 'deflate']);
const CHUNK_BYTES = 64 * 1024;

export const inflatedTooLarge = (maxInflatedBytes: number) =>
  new PayloadTooLarge(`Request body exceeds the limit of ${maxInflatedBytes} bytes once inflated`);

export async function inflateBody(body: Buffer, contentEncoding: string | undefined, maxInflatedBytes: number): Promise<Buffer> {
  // Codings are listed in the order they were applied; undo them last to first.
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  for (const c of codings) {
    if (!SUPPORTED.has(c))
      throw new UnsupportedMediaType(`Content-Encoding "${c.slice(0, 40)}" is not supported; send gzip, deflate or identity`);
  }
  let out = body;
  for (let i = codings.length - 1; i >= 0; i--) out = await inflateOne(out, codings[i]!, maxInflatedBytes);
  if (out.length > maxInflatedBytes) throw inflatedTooLarge(maxInflatedBytes);
  return out;
}

function inflateOne(input: Buffer, coding: string, maxInflatedBytes: number): Promise<Buffer> {
  if (input.length === 0) return Promise.resolve(input);
  // Senders mislabel: gzip data sent as "deflate", raw deflate without the zlib header. Sniff.
  const isGzip = coding !== 'deflate' || (input[0] === 0x1f && input[1] === 0x8b);
  const label = coding === 'deflate' ? 'deflate' : 'gzip';
  const options = { chunkSize: CHUNK_BYTES };
  const stream = isGzip ? zlib.createGunzip(options) : hasZlibHeader(input) ? zlib.createInflate(options) : zlib.createInflateRaw(options);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.length;
      if (total > maxInflatedBytes) {
        settled = true;
        chunks.length = 0;
        stream.destroy();
        reject(inflatedTooLarge(maxInflatedBytes));
        return;
      }
      chunks.push(chunk);
    });
    stream.on('error', (err: Error) => {
      if (settled) return;
      settled = true;
      reject(badRequest(`Request body is not valid ${label}: ${err.message}`));
    });
    stream.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    });
    stream.end(input);
  });
}

/** RFC 1950 header: compression method 8 and a header checksum divisible by 31. */
function hasZlibHeader(b: Buffer): boolean {
  return b.length >= 2 && (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0;
}
