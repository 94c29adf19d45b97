// The OTLP common messages every request decoder reads (opentelemetry.proto.common.v1 and
// resource.v1): Resource, KeyValue, AnyValue, ArrayValue and KeyValueList, within the DecodeLimits
// (attribute count, value size, nesting depth); what is cut is noted where it sits. The trace and
// logs decoders extend this reader with their own messages.
import { type AttrValue, type Attributes, type DecodeLimits } from '../../executions/span.ts';
import { addNote, charsNote, cutChars, depthNote, setAttr } from './validate.ts';
import { utf8, WireReader } from './proto-wire.ts';
import { badRequest, DomainError } from '../../errors.ts';

/** Runs a decoder over a request body: anything structurally wrong is a 400 naming the message. */
export function decodeOrRefuse(message: string, decode: () => void): void {
  try {
    decode();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    // protobufjs throws RangeError("index out of range ...") when a read runs off the buffer.
    const text = err instanceof Error ? err.message : String(err);
    const what = text.startsWith('index out of range')
      ? `truncated (${text})`
      : err instanceof RangeError
        ? `values nested too deeply (${text})`
        : text;
    throw badRequest(`Request body is not a valid OTLP ${message}: ${what}`);
  }
}

// Tags (field << 3 | wire type) of the fields we read.
export const T_LEN1 = 0x0a; // field 1, length-delimited
export const T_LEN2 = 0x12;
export const T_LEN3 = 0x1a;
export const T_LEN4 = 0x22;

export abstract class AttributeReader extends WireReader {
  // Where the value being decoded sits, for the notes (built only when something is cut).
  protected notes: string[] = [];
  protected ctx = 'attributes';
  protected ctxIndex = -1;
  protected attrKey = '';

  constructor(
    buf: Buffer,
    protected readonly limits: DecodeLimits,
  ) {
    super(buf);
  }

  /** A string value, cut to maxValueChars. Byte length ≥ character count, so short ones skip the check. */
  protected cutString(end: number): string {
    const stop = this.sub(end);
    const start = this.r.pos;
    this.r.pos = stop;
    if (start === stop) return '';
    const s = utf8(this.buf, start, stop);
    const max = this.limits.maxValueChars;
    if (stop - start <= max || s.length <= max) return s;
    addNote(this.notes, charsNote(this.where(), s.length, max));
    return cutChars(s, max);
  }

  protected where(): string {
    const base = this.ctxIndex >= 0 ? `${this.ctx}[${this.ctxIndex}].attributes` : this.ctx;
    return this.attrKey === '' ? base : `${base}.${this.attrKey}`;
  }

  /** Resource: attributes (1). Returns how many were sent; keeps up to maxAttributes across merges. */
  protected resource(end: number, target: Attributes, notes: string[], alreadySent: number): number {
    const r = this.r;
    this.notes = notes;
    let sent = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) this.attribute(end, target, alreadySent + sent++, 'resource.attributes', -1);
      else this.skip(tag, end);
    }
    this.done(end);
    return sent;
  }

  /** The n-th KeyValue of a repeated attributes field; past maxAttributes it is skipped unread. */
  protected attribute(end: number, target: Attributes, n: number, ctx: string, ctxIndex: number): void {
    const stop = this.sub(end);
    if (n >= this.limits.maxAttributes) {
      this.r.pos = stop;
      return;
    }
    this.ctx = ctx;
    this.ctxIndex = ctxIndex;
    this.keyValue(stop, target, 0);
  }

  /** KeyValue: key (1), value (2). The value is decoded after the loop so its notes can name the key. */
  protected keyValue(end: number, target: Attributes | { [key: string]: AttrValue }, depth: number): void {
    const r = this.r;
    let key = '';
    let valueStart = -1;
    let valueEnd = -1;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) key = this.string(end);
      else if (tag === T_LEN2) {
        valueEnd = this.sub(end);
        valueStart = r.pos;
        r.pos = valueEnd;
      } else this.skip(tag, end);
    }
    this.done(end);
    let value: AttrValue = null;
    if (valueStart >= 0) {
      if (depth === 0) this.attrKey = key;
      r.pos = valueStart;
      value = this.anyValue(valueEnd, depth);
      r.pos = end;
    }
    setAttr(target, key, value);
  }

  /** AnyValue (a oneof; the last field present wins). An empty AnyValue is null. */
  protected anyValue(end: number, depth: number): AttrValue {
    const r = this.r;
    let v: AttrValue = null;
    while (r.pos < end) {
      const tag = r.uint32();
      switch (tag) {
        case 0x0a:
          v = this.cutString(end);
          break; // 1 string_value
        case 0x10:
          v = r.bool();
          break; // 2 bool_value
        case 0x18:
          v = this.int64(end);
          break; // 3 int_value
        case 0x21:
          v = r.double();
          break; // 4 double_value
        case 0x2a:
          v = this.container(this.sub(end), depth, false);
          break; // 5 array_value
        case 0x32:
          v = this.container(this.sub(end), depth, true);
          break; // 6 kvlist_value
        case 0x3a: {
          // 7 bytes_value, kept as base64
          const stop = this.sub(end);
          const start = r.pos;
          r.pos = stop;
          v = this.buf.toString('base64', start, stop);
          if (v.length > this.limits.maxValueChars) {
            addNote(this.notes, charsNote(this.where(), v.length, this.limits.maxValueChars));
            v = v.slice(0, this.limits.maxValueChars);
          }
          break;
        }
        default:
          this.skip(tag, end);
      }
    }
    this.done(end);
    return v;
  }

  /** ArrayValue / KeyValueList: values (1). Beyond maxDepth the whole container is skipped, not read. */
  protected container(end: number, depth: number, isKvlist: boolean): AttrValue {
    const r = this.r;
    if (depth >= this.limits.maxDepth) {
      addNote(this.notes, depthNote(this.where(), this.limits.maxDepth));
      r.pos = end;
      return null;
    }
    if (isKvlist) {
      const obj: { [key: string]: AttrValue } = {};
      while (r.pos < end) {
        const tag = r.uint32();
        if (tag === T_LEN1) this.keyValue(this.sub(end), obj, depth + 1);
        else this.skip(tag, end);
      }
      this.done(end);
      return obj;
    }
    const arr: AttrValue[] = [];
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === T_LEN1) arr.push(this.anyValue(this.sub(end), depth + 1));
      else this.skip(tag, end);
    }
    this.done(end);
    return arr;
  }
}
