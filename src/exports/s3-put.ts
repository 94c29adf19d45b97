// One object PUT to an S3-compatible bucket (AWS, MinIO, R2...), path-style, signed with AWS
// signature version 4 over the payload's SHA-256. The body is streamed from a file: a day's
// export is never held in memory. The secret is used to sign only, never logged.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

export interface S3Target {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

const hmac = (key: crypto.BinaryLike, data: string) => crypto.createHmac('sha256', key).update(data).digest();
const sha256 = (data: string) => crypto.createHash('sha256').update(data).digest('hex');
/** RFC 3986 encoding of each path segment, as signature v4 wants it. */
const encodeKey = (key: string) =>
  key
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');

/**
 * The Authorization header of a request signed with AWS signature v4 (no query string): every
 * header given is signed (names lower-case). Exported for its test against AWS's published example.
 */
export function signV4(r: {
  method: string;
  url: URL;
  headers: Record<string, string>;
  payloadSha256: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  now: Date;
}): string {
  const amzDate = r.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v.trim()]));
  const names = Object.keys(headers).sort();
  const canonical = [r.method, r.url.pathname, '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), r.payloadSha256].join(
    '\n',
  );
  const scope = `${day}/${r.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${r.secretAccessKey}`, day), r.region), 's3'), 'aws4_request');
  const signature = crypto.createHmac('sha256', signingKey).update(toSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${r.accessKeyId}/${scope},SignedHeaders=${names.join(';')},Signature=${signature}`;
}

/** The URL and headers of a signed path-style PUT of `key`. */
export function signPut(
  t: S3Target,
  key: string,
  payloadSha256: string,
  contentType: string,
  now: Date,
): { url: URL; headers: Record<string, string> } {
  const url = new URL(`${t.endpoint.replace(/\/+$/, '')}/${t.bucket}/${encodeKey(key)}`);
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const headers: Record<string, string> = {
    'content-type': contentType,
    host: url.host,
    'x-amz-content-sha256': payloadSha256,
    'x-amz-date': amzDate,
  };
  return { url, headers: { ...headers, authorization: signV4({ method: 'PUT', url, headers, payloadSha256, ...t, now }) } };
}

/** PUTs a local file as `key`; rejects unless the bucket answers 2xx. */
export async function putObject(t: S3Target, key: string, file: string, payloadSha256: string, contentType: string): Promise<void> {
  const { url, headers } = signPut(t, key, payloadSha256, contentType, new Date());
  const size = (await fs.promises.stat(file)).size;
  await new Promise<void>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: 'PUT', headers: { ...headers, 'content-length': String(size) }, timeout: 300_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body.length < 2_000 ? (body += c) : undefined));
        res.on('end', () =>
          (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300
            ? resolve()
            : reject(new Error(`S3 PUT ${key}: ${res.statusCode} ${body.slice(0, 500)}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`S3 PUT ${key}: timed out`)));
    req.on('error', reject);
    fs.createReadStream(file).on('error', reject).pipe(req);
  });
}
