// RowBinary decoding, the inverse of row-binary.ts's encoders, generated from the same column list:
// the ingest loader reads the spans of the log's records from their payloads (assembly without a
// read-back), with values as the engine's JSON output gives them, so both paths see the same rows.
// Query results read as RowBinaryWithNamesAndTypes are decoded the same way (decodeNamedRows).
import { fromScaled } from '../decimal.ts';
import { toClickHouseTime } from '../time.ts';
import { parseType, type ColumnDef } from './row-binary.ts';

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

/**
 * The decoder of one ClickHouse type: values as the engine's JSON output gives them (64-bit
 * integers and decimals as text, DateTime64(3) as `YYYY-MM-DD hh:mm:ss.fff`), so a row decoded
 * from a RowBinary payload reads like the same row read back from the table.
 */
export function decoderFor(type: string): Decode {
  const { name, args } = parseType(type);
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
    case 'Float32':
      return fixed(4, (b, at) => b.readFloatLE(at));
    case 'Float64':
      return fixed(8, (b, at) => b.readDoubleLE(at));
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
      // The rows of a batch mostly share their arrival time: the last text is kept for the next row.
      let lastMs = NaN;
      let lastText = '';
      return (src) => {
        src.need(8);
        const ms = Number(src.buf.readBigInt64LE(src.pos));
        src.pos += 8;
        if (ms !== lastMs) {
          lastMs = ms;
          lastText = toClickHouseTime(new Date(ms));
        }
        return lastText;
      };
    }
    case 'Decimal': {
      const precision = Number(args[0]);
      const scale = Number(args[1]);
      const size = precision <= 9 ? 4 : precision <= 18 ? 8 : precision <= 38 ? 16 : 0;
      if (size === 0) throw new Error(`RowBinary: ${type} is not supported`);
      return (src) => {
        src.need(size);
        const b = src.buf;
        const at = src.pos;
        src.pos += size;
        const v =
          size === 4
            ? BigInt(b.readInt32LE(at))
            : size === 8
              ? b.readBigInt64LE(at)
              : b.readBigUInt64LE(at) + (b.readBigInt64LE(at + 8) << 64n);
        return fromScaled(v, scale);
      };
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

/**
 * The rows of a query's `RowBinaryWithNamesAndTypes` output, keyed by column name, each value as
 * the JSON output gives it (64-bit integers as text, DateTime64(3) as `YYYY-MM-DD hh:mm:ss.fff`).
 * Columns whose JSON value this decoding would not give (Date, DateTime, Decimal, DateTime64 of
 * another precision) are refused: a query selects them with toString().
 */
export function decodeNamedRows<T>(output: Buffer): T[] {
  const src = new ByteSource(output);
  if (src.done) return [];
  const n = src.varUInt();
  const names = Array.from({ length: n }, () => src.string());
  const reads = names.map((name) => {
    const type = src.string();
    if (/\b(Date|DateTime|Decimal)\b|DateTime64\((?!3\b)/.test(type))
      throw new Error(`RowBinary: column ${name} is a ${type}; select it with toString()`);
    return decoderFor(type);
  });
  const rows: T[] = [];
  while (!src.done) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) row[names[i]!] = reads[i]!(src);
    rows.push(row as T);
  }
  return rows;
}
