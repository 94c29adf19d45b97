// ClickHouse RowBinary, encoded from a table's own column list (system.columns), so a new column
// needs no encoder change: rows are plain objects keyed by column name, as for JSONEachRow, and
// each column's encoder is chosen once from its type. The engine then stores the bytes without
// parsing text (no JSON escapes, no number parsing), which is what made JSONEachRow the ceiling.
// Types covered are the ones our tables use; an unknown type fails when the encoder is built
// (at start), never on a row.
import { toScaled } from '../decimal.ts';

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
  float(v: number, size: 4 | 8): void {
    this.ensure(size);
    if (size === 8) this.buf.writeDoubleLE(v, this.pos);
    else this.buf.writeFloatLE(v, this.pos);
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

/** A ClickHouse type's name and arguments: `Map(String, Array(UInt8))` → Map, [String, Array(UInt8)]. */
export function parseType(type: string): { name: string; args: string[] } {
  const m = /^(\w+)(?:\((.*)\))?$/s.exec(type.trim());
  if (!m) throw new Error(`RowBinary: cannot read type ${type}`);
  return { name: m[1]!, args: m[2] !== undefined ? splitArgs(m[2]) : [] };
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
  const { name, args } = parseType(type);
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
    case 'Float32':
      return (s, v) => s.float(Number(v ?? 0), 4);
    case 'Float64':
      return (s, v) => s.float(Number(v ?? 0), 8);
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
