// The protobuf wire primitives the OTLP decoder is built on: protobufjs's Reader, plus checks
// that every declared length stays inside its enclosing message (checked before anything is read
// or allocated) and native hex/utf8 slicing. A structural problem throws Malformed (a 400 above).
import protobuf from 'protobufjs/minimal.js';
import { int64Value } from './validate.ts';

// Node's Buffer slicers, as protobufjs itself uses them: toString() adds argument checks that
// cost ~15% of decoding on attribute-heavy spans. Fallback for runtimes without them.
interface Slicers {
  utf8Slice?: (start: number, end: number) => string;
  hexSlice?: (start: number, end: number) => string;
}
const FAST_SLICE =
  typeof (Buffer.prototype as Slicers).utf8Slice === 'function' && typeof (Buffer.prototype as Slicers).hexSlice === 'function';
export const utf8 = (buf: Buffer, start: number, end: number): string =>
  FAST_SLICE ? (buf as Slicers).utf8Slice!(start, end) : buf.toString('utf8', start, end);
const hex = (buf: Buffer, start: number, end: number): string =>
  FAST_SLICE ? (buf as Slicers).hexSlice!(start, end) : buf.toString('hex', start, end);

/** A structural problem in the body; turned into a 400 at the top. */
export class Malformed extends Error {}

export abstract class WireReader {
  protected readonly r: protobuf.Reader;

  constructor(protected readonly buf: Buffer) {
    this.r = protobuf.Reader.create(buf);
  }

  /** Reads a length prefix; returns where that field ends, refused if past its parent's end. */
  protected sub(end: number): number {
    const r = this.r;
    const len = r.uint32();
    const stop = r.pos + len;
    if (stop > end) throw new Malformed(`length ${len} at offset ${r.pos} runs past the end of its message (offset ${end})`);
    return stop;
  }

  /** After a message's fields: a field that ran past the message's end is corrupt. */
  protected done(end: number): void {
    if (this.r.pos !== end) throw new Malformed(`a field runs past the end of its message (offset ${end})`);
  }

  protected skip(tag: number, end: number): void {
    const r = this.r;
    if (tag >>> 3 === 0) throw new Malformed(`invalid field number 0 at offset ${r.pos}`);
    switch (tag & 7) {
      case 0:
        r.skip();
        break;
      case 1:
        r.skip(8);
        break;
      case 2:
        r.pos = this.sub(end);
        break;
      case 5:
        r.skip(4);
        break;
      // 3 and 4 are the deprecated groups, which OTLP never uses; 6 and 7 do not exist.
      default:
        throw new Malformed(`invalid wire type ${tag & 7} for field ${tag >>> 3} at offset ${r.pos}`);
    }
    if (r.pos > end) throw new Malformed(`field ${tag >>> 3} runs past the end of its message (offset ${end})`);
  }

  protected string(end: number): string {
    const stop = this.sub(end);
    const start = this.r.pos;
    this.r.pos = stop;
    return start === stop ? '' : utf8(this.buf, start, stop);
  }

  protected id(end: number): string {
    const stop = this.sub(end);
    const start = this.r.pos;
    this.r.pos = stop;
    return start === stop ? '' : hex(this.buf, start, stop);
  }

  protected fixed64(end: number): bigint {
    const p = this.r.pos;
    if (p + 8 > end) throw new Malformed(`truncated fixed64 at offset ${p}`);
    this.r.pos = p + 8;
    return this.buf.readBigUInt64LE(p);
  }

  /** int64 varint (negative values take 10 bytes) → exact number, or decimal string past 2^53. */
  protected int64(end: number): number | string {
    const buf = this.buf;
    let pos = this.r.pos;
    let lo = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= end) throw new Malformed(`truncated varint at offset ${pos}`);
      const b = buf[pos++]!;
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.r.pos = pos;
        return lo;
      }
    }
    let v = BigInt(lo);
    for (let shift = 28n; ; shift += 7n) {
      if (pos >= end) throw new Malformed(`truncated varint at offset ${pos}`);
      if (shift > 63n) throw new Malformed(`varint longer than 10 bytes at offset ${pos}`);
      const b = buf[pos++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    this.r.pos = pos;
    return int64Value(BigInt.asIntN(64, v));
  }
}
