// An execution's cost breakdown (docs/spend.md, "Cost breakdown"): one line per usage type, price
// and rule, summed over the execution's calls. Lines are exact (18 decimals); the lines that
// count sum, rounded half-up to 9 decimals per call, to cost_usd. A cost the caller stated is one
// `caller` line that counts; the computed lines beside it are shown with counted: false. Stored
// as the `cost_lines` JSON column (028_usage_types.sql): listings never read it.
import { fromScaled, NANOS } from '../decimal.ts';
import { DETAIL_TYPES, LINE_SCALE, type PricingContext, type UsageDetails, type UsageType } from '../pricing/cost.ts';
import type { PricedCall } from './pricing.ts';

/** A nano-dollar amount (the caller's stated cost) at the lines' scale. */
const NANOS_TO_LINE = 10n ** BigInt(LINE_SCALE - NANOS);

export type CostLineSource = 'project' | 'catalogue' | 'caller';

export interface StoredCostLine {
  /** A usage type, or `provided` for the caller's own cost */
  type: UsageType | 'provided';
  quantity: number;
  unit: 'tokens' | 'calls';
  /** USD per million tokens (per call for web_search); null for the caller's cost */
  rate: string | null;
  cost_usd: string;
  source: CostLineSource;
  price_id: string;
  rule: string;
  /** The calls of the execution this line sums */
  calls: number;
  /** Whether it is part of cost_usd (false: computed beside a cost the caller stated) */
  counted: boolean;
}

export const sourceOfPrice = (priceId: string): CostLineSource => (priceId.startsWith('project:') ? 'project' : 'catalogue');

export class CostLines {
  private readonly lines = new Map<string, StoredCostLine & { exact: bigint }>();

  /** Adds a line to the one of the same type, source, price, rule, rate and counting, or starts it. */
  private put(l: Omit<StoredCostLine, 'calls' | 'cost_usd'>, exact: bigint): void {
    const key = `${l.type}\u0000${l.source}\u0000${l.price_id}\u0000${l.rule}\u0000${l.rate ?? ''}\u0000${l.counted ? 1 : 0}`;
    const had = this.lines.get(key);
    if (had) {
      had.quantity += l.quantity;
      had.exact += exact;
      had.calls += 1;
      return;
    }
    // The stored JSON keeps this key order (the content hash and repricing compare the text).
    this.lines.set(key, {
      type: l.type,
      quantity: l.quantity,
      unit: l.unit,
      rate: l.rate,
      cost_usd: '',
      source: l.source,
      price_id: l.price_id,
      rule: l.rule,
      counted: l.counted,
      calls: 1,
      exact,
    });
  }

  /** One priced call's lines. */
  add(priced: PricedCall): void {
    const provided = priced.source === 'provided';
    if (provided)
      this.put(
        {
          type: 'provided',
          quantity: 1,
          unit: 'calls',
          rate: null,
          source: 'caller',
          price_id: '',
          rule: 'cost stated by the caller',
          counted: true,
        },
        priced.costNanos * NANOS_TO_LINE,
      );
    if (!priced.computed || !priced.price) return;
    const source = sourceOfPrice(priced.price.price_id);
    const { rule } = priced.computed;
    for (const l of priced.computed.lines)
      this.put(
        {
          type: l.type,
          quantity: l.quantity,
          unit: l.unit,
          rate: l.rate,
          source,
          price_id: priced.price.price_id,
          rule,
          counted: !provided,
        },
        l.exact,
      );
  }

  list(): StoredCostLine[] {
    return [...this.lines.values()].map(({ exact, ...l }) => ({ ...l, cost_usd: fromScaled(exact, LINE_SCALE) }));
  }

  /** The column's text: '' when there is no line (an unpriced execution). */
  toJson(): string {
    return this.lines.size ? JSON.stringify(this.list()) : '';
  }
}

/** The stored lines, read back (an execution stored before 028 has none). */
export function parseCostLines(text: string | undefined | null): StoredCostLine[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? (v as StoredCostLine[]) : [];
  } catch {
    return [];
  }
}

/** Sums usage details (from spans or a record) into the Map column's shape: whole counts, zeros left out. */
export function addDetails(into: Record<string, number>, d: UsageDetails | Record<string, unknown> | undefined): void {
  if (!d) return;
  for (const k of DETAIL_TYPES) {
    const n = Number((d as Record<string, unknown>)[k] ?? 0);
    if (Number.isFinite(n) && n > 0) into[k] = Math.min((into[k] ?? 0) + n, Number.MAX_SAFE_INTEGER);
  }
}

/** A Map column's details as pricing reads them. */
export function detailsOf(m: Record<string, unknown> | undefined): UsageDetails {
  const out: UsageDetails = {};
  addDetails(out as Record<string, number>, m);
  return out;
}

/** The pricing_context Map column → what conditions match. */
export function contextOf(m: Record<string, unknown> | undefined): PricingContext {
  const out: PricingContext = {};
  if (!m) return out;
  if (typeof m.service_tier === 'string' && m.service_tier) out.service_tier = m.service_tier;
  if (typeof m.region === 'string' && m.region) out.region = m.region;
  if (m.batch === 'true') out.batch = true;
  return out;
}

/** What conditions match against, as the pricing_context Map column holds it (batch as 'true'). */
export function contextColumns(c: PricingContext | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (c?.service_tier) out.service_tier = c.service_tier;
  if (c?.region) out.region = c.region;
  if (c?.batch) out.batch = 'true';
  return out;
}
