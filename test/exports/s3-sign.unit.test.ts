// AWS signature v4 of the scheduled export's S3 PUT, against the example AWS publishes for
// "PUT Object" (Signature Calculations for the Authorization Header, Amazon S3 API reference).
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signPut, signV4 } from '../../src/exports/s3-put.ts';

const example = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' };

describe('S3 signature v4', () => {
  it("matches AWS's published PUT Object example", () => {
    const payloadSha256 = crypto.createHash('sha256').update('Welcome to Amazon S3.').digest('hex');
    expect(payloadSha256).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072');
    const auth = signV4({
      method: 'PUT',
      url: new URL('https://examplebucket.s3.amazonaws.com/test%24file.text'),
      headers: {
        Host: 'examplebucket.s3.amazonaws.com',
        Date: 'Fri, 24 May 2013 00:00:00 GMT',
        'x-amz-date': '20130524T000000Z',
        'x-amz-storage-class': 'REDUCED_REDUNDANCY',
        'x-amz-content-sha256': payloadSha256,
      },
      payloadSha256,
      ...example,
      now: new Date('2013-05-24T00:00:00Z'),
    });
    expect(auth).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
    );
  });

  it('signs path-style PUTs of export keys, segments encoded', () => {
    const { url, headers } = signPut(
      { ...example, endpoint: 'http://minio:9000/', bucket: 'exports' },
      'team a/executions/2026-11-22.parquet',
      'e3b0c442',
      'application/vnd.apache.parquet',
      new Date('2026-11-23T01:00:00Z'),
    );
    expect(url.toString()).toBe('http://minio:9000/exports/team%20a/executions/2026-11-22.parquet');
    expect(headers).toMatchObject({ host: 'minio:9000', 'x-amz-date': '20261123T010000Z', 'x-amz-content-sha256': 'e3b0c442' });
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/20261123\/us-east-1\/s3\/aws4_request,SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,Signature=[0-9a-f]{64}$/,
    );
  });
});
