// Our errors as gRPC statuses, for OTLP/gRPC exporters (their retry rules: UNAVAILABLE is
// retried; RESOURCE_EXHAUSTED only with a RetryInfo; the rest not). 400/415/422 → INVALID_ARGUMENT,
// 401 → UNAUTHENTICATED, 403 → PERMISSION_DENIED, 413 → RESOURCE_EXHAUSTED (no RetryInfo: a
// request too large is never retried), 429 → RESOURCE_EXHAUSTED and 503 → UNAVAILABLE, both with
// a google.rpc.RetryInfo from Retry-After in `grpc-status-details-bin`; anything else INTERNAL
// with a generic message (the error itself goes to the log, never to the caller).
import { Metadata, status as Code, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs/minimal.js';
import { toHttpError } from '../http/errors.ts';

export type GrpcStatus = Partial<ServiceError> & { code: Code; details: string };

/**
 * google.rpc.Status { code 1, message 2, details 3: [Any { type_url 1, value 2: RetryInfo {
 * retry_delay 1: Duration { seconds 1 } } }] }
 */
export function retryStatusDetails(code: number, message: string, retryAfterS: number): Buffer {
  const delay = protobuf.Writer.create()
    .uint32(0x08)
    .int64(Math.max(0, Math.round(retryAfterS)))
    .finish();
  const retryInfo = protobuf.Writer.create().uint32(0x0a).bytes(delay).finish();
  const any = protobuf.Writer.create()
    .uint32(0x0a)
    .string('type.googleapis.com/google.rpc.RetryInfo')
    .uint32(0x12)
    .bytes(retryInfo)
    .finish();
  return Buffer.from(protobuf.Writer.create().uint32(0x08).int32(code).uint32(0x12).string(message).uint32(0x1a).bytes(any).finish());
}

function withRetry(code: Code, details: string, retryAfter: string | undefined): GrpcStatus {
  const seconds = Number(retryAfter ?? 1);
  const metadata = new Metadata();
  metadata.set('grpc-status-details-bin', retryStatusDetails(code, details, Number.isFinite(seconds) ? seconds : 1));
  return { code, details, metadata };
}

/** The status for an error; `unexpected` is told about errors that are not ours to explain. */
export function toGrpcStatus(err: unknown, unexpected: (err: unknown) => void): GrpcStatus {
  // The HTTP mapping decides which errors are ours and their class (one mapping, src/http/errors.ts).
  const e = toHttpError(err);
  if (!e) {
    unexpected(err);
    return { code: Code.INTERNAL, details: 'Internal error' };
  }
  switch (e.status) {
    case 400:
    case 415:
    case 422:
      return { code: Code.INVALID_ARGUMENT, details: e.detail };
    case 401:
      return { code: Code.UNAUTHENTICATED, details: e.detail };
    case 403:
      return { code: Code.PERMISSION_DENIED, details: e.detail };
    case 413:
      return { code: Code.RESOURCE_EXHAUSTED, details: e.detail };
    case 429:
      return withRetry(Code.RESOURCE_EXHAUSTED, e.detail, e.headers['Retry-After']);
    case 503:
      return withRetry(Code.UNAVAILABLE, e.detail, e.headers['Retry-After']);
    default:
      if (e.status < 500) return { code: Code.FAILED_PRECONDITION, details: e.detail };
      unexpected(err);
      return { code: Code.INTERNAL, details: 'Internal error' };
  }
}
