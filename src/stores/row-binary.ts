// ClickHouse RowBinary, encoded from a table's own column list (system.columns), so a new column
// needs no encoder change: rows are plain objects keyed by column name, as for JSONEachRow, and
// each column's encoder is chosen once from its type. The engine then stores the bytes without
// parsing text (no JSON escapes, no number parsing), which is what made JSONEachRow the ceiling.
// Types covered are the ones our tables use; an unknown type fails when the encoder is built
// (at start), never on a row.
import { toScaled } from '../pricing/decimal.ts';

export interface ColumnDef {
  name: string;
  type: string;
}

/** A growable byte buffer with the RowBinary primitives. */
export class ByteSink {
  buf: Buffer;
  pos = 0;
  constructor(initial = 1 << 16) {
    this.buf = Buffer.allocUnsafe(initial);
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  varUInt(v: number): void {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }
  string(s: string): void {
    // Short strings: at most 3 bytes per UTF-16 unit, so a 1-byte length prefix is reserved when
    // that bound is under 128, and the text written straight after it.
    if (s.length < 43) {
      this.ensure(1 + s.length * 3);
      const n = this.buf.write(s, this.pos + 1, 'utf8');
      this.buf[this.pos] = n;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.varUInt(n);
    this.ensure(n);
    this.buf.write(s, this.pos, n, 'utf8');
    this.pos += n;
  }
  bytes(b: Uint8Array): void {
    this.varUInt(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  uint(v: number | bigint, size: 1 | 2 | 4 | 8): void {
    this.ensure(size);
    if (size === 8) {
      if (typeof v === 'number' && v >= 0 && v <= Number.MAX_SAFE_INTEGER) {
        // Two 32-bit halves: no BigInt for the common case (token counts, milliseconds).
        this.buf.writeUInt32LE(v % 0x1_0000_0000, this.pos);
        this.buf.writeUInt32LE(Math.floor(v / 0x1_0000_0000), this.pos + 4);
      } else this.buf.writeBigUInt64LE(BigInt(v), this.pos);
    } else this.buf.writeUIntLE(Number(v), this.pos, size);
    this.pos += size;
  }
  int(v: number | bigint, size: 1 | 2 | 4 | 8 | 16): void {
    this.ensure(size);
    if (size === 8 && typeof v === 'number' && Number.isSafeInteger(v)) {
      const low = ((v % 0x1_0000_0000) + 0x1_0000_0000) % 0x1_0000_0000;
      this.buf.writeUInt32LE(low, this.pos);
      this.buf.writeInt32LE((v - low) / 0x1_0000_0000, this.pos + 4);
    } else if (size === 16) {
      const b = BigInt(v);
      this.buf.writeBigUInt64LE(BigInt.asUintN(64, b), this.pos);
      this.buf.writeBigInt64LE(BigInt.asIntN(64, b >> 64n), this.pos + 8);
    } else if (size === 8) this.buf.writeBigInt64LE(BigInt(v), this.pos);
    else this.buf.writeIntLE(Number(v), this.pos, size);
    this.pos += size;
  }
  /** The bytes written so far (a view: copy it before the sink is reused). */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
  reset(): void {
    this.pos = 0;
  }
}

type Encode = (sink: ByteSink, value: unknown) => void;

/** A UInt64 from a number, bigint or decimal string (a number when it is exact as one). */
function uint64(v: unknown): number | bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Math.max(0, Math.floor(v));
  if (typeof v === 'string' && v !== '') return v.length < 16 ? Number(v) : BigInt(v);
  return 0;
}

/** Milliseconds since the epoch from a number, a Date, or ClickHouse's `YYYY-MM-DD hh:mm:ss[.fff]` (UTC). */
let lastTimeText = '';
let lastTimeMs = 0;
export function timeMs(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    if (v === lastTimeText) return lastTimeMs;
    const ms = Date.parse(v.includes('T') ? v : `${v.replace(' ', 'T')}Z`);
    if (Number.isNaN(ms)) throw new Error(`not a time: ${v}`);
    lastTimeText = v;
    lastTimeMs = ms;
    return ms;
  }
  return 0;
}

function decimalScaled(v: unknown, scale: number): bigint {
  if (typeof v === 'bigint') return v;
  return toScaled(typeof v === 'number' ? v : String(v ?? '0'), scale);
}

/** Splits `A, B(C, D), E` at top-level commas. */
function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(s.slice(start).trim());
  return out;
}

/** The encoder of one ClickHouse type. */
export function encoderFor(type: string): Encode {
  const m = /^(\w+)(?:\((.*)\))?$/s.exec(type.trim());
  if (!m) throw new Error(`RowBinary: cannot read type ${type}`);
  const [, name, argText] = m;
  const args = argText !== undefined ? splitArgs(argText) : [];
  switch (name) {
    case 'String':
      return (s, v) => (v instanceof Uint8Array ? s.bytes(v) : s.string(v == null ? '' : String(v)));
    case 'LowCardinality':
      return encoderFor(args[0]!);
    case 'UInt8':
      return (s, v) => s.u8(Number(v ?? 0) & 0xff);
    case 'UInt16':
      return (s, v) => s.uint(Number(v ?? 0), 2);
    case 'UInt32':
      return (s, v) => s.uint(Number(v ?? 0), 4);
    case 'UInt64':
      return (s, v) => s.uint(uint64(v), 8);
    case 'Int8':
      return (s, v) => s.int(Number(v ?? 0), 1);
    case 'Int16':
      return (s, v) => s.int(Number(v ?? 0), 2);
    case 'Int32':
      return (s, v) => s.int(Number(v ?? 0), 4);
    case 'Int64':
      return (s, v) => s.int(typeof v === 'number' ? v : BigInt((v as string | bigint | undefined) ?? 0), 8);
    case 'Date':
      return (s, v) => s.uint(Math.floor(timeMs(typeof v === 'string' && v.length === 10 ? `${v} 00:00:00` : v) / 86_400_000), 2);
    case 'DateTime':
      return (s, v) => s.uint(Math.floor(timeMs(v) / 1000), 4);
    case 'DateTime64': {
      const precision = Number(args[0]);
      if (precision === 3) return (s, v) => s.int(Math.round(timeMs(v)), 8);
      // Sub-millisecond precision: a bigint of that unit, or milliseconds scaled up.
      const per = 10n ** BigInt(precision - 3);
      return (s, v) => s.int(typeof v === 'bigint' ? v : BigInt(Math.round(timeMs(v))) * per, 8);
    }
    case 'Decimal': {
      const precision = Number(args[0]);
      const scale = Number(args[1]);
      const size = precision <= 9 ? 4 : precision <= 18 ? 8 : precision <= 38 ? 16 : 0;
      if (size === 0) throw new Error(`RowBinary: ${type} is not supported`);
      return (s, v) => s.int(decimalScaled(v, scale), size as 4 | 8 | 16);
    }
    case 'Nullable': {
      const inner = encoderFor(args[0]!);
      return (s, v) => {
        if (v === null || v === undefined) return s.u8(1);
        s.u8(0);
        inner(s, v);
      };
    }
    case 'Array': {
      const inner = encoderFor(args[0]!);
      return (s, v) => {
        const list = (v ?? []) as unknown[];
        s.varUInt(list.length);
        for (const item of list) inner(s, item);
      };
    }
    case 'Map': {
      const key = encoderFor(args[0]!);
      const value = encoderFor(args[1]!);
      return (s, v) => {
        const entries = v instanceof Map ? [...v] : Object.entries((v ?? {}) as Record<string, unknown>);
        s.varUInt(entries.length);
        for (const [k, val] of entries) {
          key(s, k);
          value(s, val);
        }
      };
    }
    default:
      throw new Error(`RowBinary: type ${type} is not supported`);
  }
}

export interface RowEncoder {
  /** The column list of the INSERT, in encoding order. */
  readonly columns: readonly string[];
  /** Appends one row; a missing key encodes as the type's default. */
  encode(sink: ByteSink, row: Record<string, unknown>): void;
}

/** The encoder of a table's insertable columns (MATERIALIZED and ALIAS columns left out by the caller). */
export function rowEncoder(columns: readonly ColumnDef[]): RowEncoder {
  const names = columns.map((c) => c.name);
  const encoders = columns.map((c) => encoderFor(c.type));
  const n = names.length;
  return {
    columns: names,
    encode(sink, row) {
      for (let i = 0; i < n; i++) encoders[i]!(sink, row[names[i]!]);
    },
  };
}

/** A cursor over RowBinary bytes, with the primitives the decoders read. */
export class ByteSource {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  need(n: number): void {
    if (this.pos + n > this.buf.length) throw new Error(`RowBinary: ${n} bytes needed at ${this.pos}, ${this.buf.length - this.pos} left`);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }
  varUInt(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = this.u8();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  }
  string(): string {
    const n = this.varUInt();
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  skipString(): void {
    const n = this.varUInt();
    this.need(n);
    this.pos += n;
  }
  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }
}

type Decode = (src: ByteSource) => unknown;

const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** `YYYY-MM-DD hh:mm:ss.fff` (UTC), as the engine prints a DateTime64(3). */
function timeText(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** A scaled integer as the engine prints a Decimal: no trailing zeros, no trailing point. */
function decimalText(v: bigint, scale: number): string {
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/**
 * The decoder of one ClickHouse type: values as the engine's JSON output gives them (64-bit
 * integers and decimals as text, DateTime64(3) as `YYYY-MM-DD hh:mm:ss.fff`), so a row decoded
 * from a RowBinary payload reads like the same row read back from the table.
 */
export function decoderFor(type: string): Decode {
  const m = /^(\w+)(?:\((.*)\))?$/s.exec(type.trim());
  if (!m) throw new Error(`RowBinary: cannot read type ${type}`);
  const [, name, argText] = m;
  const args = argText !== undefined ? splitArgs(argText) : [];
  const fixed =
    (size: number, read: (b: Buffer, at: number) => number | bigint, text = false): Decode =>
    (src) => {
      src.need(size);
      const v = read(src.buf, src.pos);
      src.pos += size;
      return text ? String(v) : v;
    };
  switch (name) {
    case 'String':
      return (src) => src.string();
    case 'LowCardinality':
      return decoderFor(args[0]!);
    case 'UInt8':
      return (src) => src.u8();
    case 'UInt16':
      return fixed(2, (b, at) => b.readUInt16LE(at));
    case 'UInt32':
      return fixed(4, (b, at) => b.readUInt32LE(at));
    case 'UInt64':
      return fixed(8, (b, at) => b.readBigUInt64LE(at), true);
    case 'Int8':
      return fixed(1, (b, at) => b.readInt8(at));
    case 'Int16':
      return fixed(2, (b, at) => b.readInt16LE(at));
    case 'Int32':
      return fixed(4, (b, at) => b.readInt32LE(at));
    case 'Int64':
      return fixed(8, (b, at) => b.readBigInt64LE(at), true);
    case 'Date':
      return fixed(2, (b, at) => b.readUInt16LE(at)) as Decode;
    case 'DateTime':
      return fixed(4, (b, at) => b.readUInt32LE(at));
    case 'DateTime64': {
      if (Number(args[0]) !== 3) return fixed(8, (b, at) => b.readBigInt64LE(at), true);
      return (src) => {
        src.need(8);
        const ms = Number(src.buf.readBigInt64LE(src.pos));
        src.pos += 8;
        return timeText(ms);
      };
    }
    case 'Decimal': {
      const precision = Number(args[0]);
      const scale = Number(args[1]);
      if (precision <= 9) return (src) => decimalText(BigInt(fixed(4, (b, at) => b.readInt32LE(at))(src) as number), scale);
      if (precision <= 18) return (src) => decimalText(fixed(8, (b, at) => b.readBigInt64LE(at))(src) as bigint, scale);
      if (precision <= 38) {
        return (src) => {
          src.need(16);
          const v = src.buf.readBigUInt64LE(src.pos) + (src.buf.readBigInt64LE(src.pos + 8) << 64n);
          src.pos += 16;
          return decimalText(v, scale);
        };
      }
      throw new Error(`RowBinary: ${type} is not supported`);
    }
    case 'Nullable': {
      const inner = decoderFor(args[0]!);
      return (src) => (src.u8() === 1 ? null : inner(src));
    }
    case 'Array': {
      const inner = decoderFor(args[0]!);
      return (src) => {
        const n = src.varUInt();
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) out[i] = inner(src);
        return out;
      };
    }
    case 'Map': {
      const key = decoderFor(args[0]!);
      const value = decoderFor(args[1]!);
      return (src) => {
        const n = src.varUInt();
        const out: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) {
          const k = String(key(src));
          out[k] = value(src);
        }
        return out;
      };
    }
    default:
      throw new Error(`RowBinary: type ${type} is not supported`);
  }
}

/** Skips a value of the type without building it (strings are not decoded). */
function skipperFor(type: string): (src: ByteSource) => void {
  const t = type.trim();
  if (t === 'String' || t === 'LowCardinality(String)') return (src) => src.skipString();
  const decode = decoderFor(t);
  return (src) => void decode(src);
}

export interface RowDecoder {
  /** Wanted columns the rows do not hold (encoded before they were added). */
  readonly missing: readonly string[];
  /** Every row of a payload, with the wanted columns only. */
  decode(payload: Buffer): Array<Record<string, unknown>>;
}

/** The decoder of rows encoded by `rowEncoder(columns)`: the wanted columns are read, the others skipped. */
export function rowDecoder(columns: readonly ColumnDef[], wanted: ReadonlySet<string>): RowDecoder {
  const steps = columns.map((c) =>
    wanted.has(c.name) ? { name: c.name, read: decoderFor(c.type) } : { name: undefined, read: skipperFor(c.type) },
  );
  return {
    missing: [...wanted].filter((name) => !columns.some((c) => c.name === name)),
    decode(payload) {
      const src = new ByteSource(payload);
      const rows: Array<Record<string, unknown>> = [];
      while (!src.done) {
        const row: Record<string, unknown> = {};
        for (const step of steps) {
          const v = step.read(src);
          if (step.name !== undefined) row[step.name] = v;
        }
        rows.push(row);
      }
      return rows;
    },
  };
}
