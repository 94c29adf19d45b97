// The collapse rule of the versioned tables (executions, scores, their indexes), applied in code
// to rows read without FINAL, as FINAL would apply it: the rows of one key and version cancel
// out by sign (a cancel row, sign −1, repeats the row it cancels), and of a key's versions left
// the newest is the live row. Every reader that settles raw rows itself uses this one rule.

export interface VersionedRow {
  version: string | number | bigint;
  /** 1 or −1; rows of a table without cancel rows (a trace index) have none: each counts 1. */
  sign?: number | string;
}

/** The live row of each key (`keyOf`), in the order the keys first appear; keys with no live version are absent. */
export function liveRows<R extends VersionedRow>(rows: Iterable<R>, keyOf: (row: R) => string): Map<string, R> {
  const versions = new Map<string, Map<string, { net: number; row: R | undefined }>>();
  for (const r of rows) {
    const key = keyOf(r);
    let byVersion = versions.get(key);
    if (!byVersion) versions.set(key, (byVersion = new Map()));
    const v = String(r.version);
    const sign = r.sign === undefined ? 1 : Number(r.sign);
    const e = byVersion.get(v);
    if (e) {
      e.net += sign;
      e.row ??= sign === 1 ? r : undefined;
    } else byVersion.set(v, { net: sign, row: sign === 1 ? r : undefined });
  }
  const live = new Map<string, R>();
  for (const [key, byVersion] of versions) {
    let best: { version: bigint; row: R } | undefined;
    for (const [v, { net, row }] of byVersion) {
      if (net <= 0 || !row) continue;
      const version = BigInt(v);
      if (!best || version > best.version) best = { version, row };
    }
    if (best) live.set(key, best.row);
  }
  return live;
}
