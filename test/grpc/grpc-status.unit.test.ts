// Our errors as gRPC statuses (src/grpc/status.ts): what OTLP/gRPC exporters retry (UNAVAILABLE,
// and RESOURCE_EXHAUSTED only with a RetryInfo) and what they must not (everything else). The
// RetryInfo is a google.rpc.Status in `grpc-status-details-bin`, decoded here field by field.
import { describe, expect, it } from 'vitest';
import { status as Code } from '@grpc/grpc-js';
import protobuf from 'protobufjs/minimal.js';
import { badRequest, forbidden, payloadTooLarge, unauthorized, unavailable, unsupportedMediaType } from '../../src/errors.ts';
import { HttpError } from '../../src/http/errors.ts';
import { StoreUnavailableError } from '../../src/stores/errors.ts';
import { toGrpcStatus } from '../../src/grpc/status.ts';

/** google.rpc.Status → { code, message, retry delay in seconds of its RetryInfo }. */
function decodeStatus(buf: Buffer): { code: number; message: string; typeUrl: string; seconds: number } {
  const out = { code: 0, message: '', typeUrl: '', seconds: -1 };
  const r = protobuf.Reader.create(buf);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 0x08) out.code = r.int32();
    else if (tag === 0x12) out.message = r.string();
    else if (tag === 0x1a) {
      const any = protobuf.Reader.create(r.bytes());
      while (any.pos < any.len) {
        const t = any.uint32();
        if (t === 0x0a) out.typeUrl = any.string();
        else if (t === 0x12) {
          const info = protobuf.Reader.create(any.bytes());
          info.uint32(); // retry_delay
          const d = protobuf.Reader.create(info.bytes());
          d.uint32(); // seconds
          out.seconds = Number(d.int64());
        } else any.skipType(t & 7);
      }
    } else r.skipType(tag & 7);
  }
  return out;
}

const noUnexpected = () => {
  throw new Error('not expected');
};

describe('errors as gRPC statuses', () => {
  it('client errors are not retried', () => {
    expect(toGrpcStatus(badRequest('span 0: trace_id'), noUnexpected)).toEqual({
      code: Code.INVALID_ARGUMENT,
      details: 'span 0: trace_id',
    });
    expect(toGrpcStatus(unsupportedMediaType('x', 'y'), noUnexpected).code).toBe(Code.INVALID_ARGUMENT);
    expect(toGrpcStatus(unauthorized(), noUnexpected).code).toBe(Code.UNAUTHENTICATED);
    expect(toGrpcStatus(forbidden(), noUnexpected).code).toBe(Code.PERMISSION_DENIED);
    const tooLarge = toGrpcStatus(payloadTooLarge(10), noUnexpected);
    expect(tooLarge.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(tooLarge.metadata).toBeUndefined(); // no RetryInfo: never retried
  });

  it('503 is UNAVAILABLE with a RetryInfo carrying Retry-After; 429 RESOURCE_EXHAUSTED with one', () => {
    const s = toGrpcStatus(unavailable('The spans write queue is full; retry later', 3), noUnexpected);
    expect(s.code).toBe(Code.UNAVAILABLE);
    const details = s.metadata!.get('grpc-status-details-bin')[0] as Buffer;
    expect(decodeStatus(details)).toEqual({
      code: Code.UNAVAILABLE,
      message: 'The spans write queue is full; retry later',
      typeUrl: 'type.googleapis.com/google.rpc.RetryInfo',
      seconds: 3,
    });
    const limited = toGrpcStatus(new HttpError(429, 'slow down', { 'Retry-After': '7' }), noUnexpected);
    expect(limited.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(decodeStatus(limited.metadata!.get('grpc-status-details-bin')[0] as Buffer).seconds).toBe(7);
  });

  it('a store that is down is UNAVAILABLE; anything unexpected INTERNAL without its text', () => {
    expect(toGrpcStatus(new StoreUnavailableError('clickhouse'), noUnexpected).code).toBe(Code.UNAVAILABLE);
    const seen: unknown[] = [];
    const s = toGrpcStatus(new Error('secret internals'), (e) => seen.push(e));
    expect(s).toEqual({ code: Code.INTERNAL, details: 'Internal error' });
    expect(seen).toHaveLength(1);
  });
});
