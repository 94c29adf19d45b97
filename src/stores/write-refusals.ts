// Which stores (and files of our own) refused a write lately, and why: what /api/health reports
// beside the pings, since a store out of disk space still answers a ping. A refusal counts until
// a write to the same store succeeds, or for REFUSAL_WINDOW_MS when no write was tried since.
import { refusalOf, type WriteRefusal, type Writer } from './errors.ts';

export const REFUSAL_WINDOW_MS = 60_000;

export interface Refusal {
  store: Writer;
  reason: WriteRefusal;
  /** When it last refused (epoch ms). */
  at: number;
}

export class WriteRefusals {
  private readonly last = new Map<Writer, Refusal>();

  constructor(
    private readonly windowMs = REFUSAL_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records `err` when it is a refusal; returns the reason (undefined for any other error). */
  failed(store: Writer, err: unknown): WriteRefusal | undefined {
    const reason = refusalOf(err);
    if (reason) this.last.set(store, { store, reason, at: this.now() });
    return reason;
  }

  /** A write to `store` succeeded: what it refused before is over. */
  wrote(store: Writer): void {
    if (this.last.size > 0) this.last.delete(store);
  }

  /** Refusals still current, in a stable order. */
  current(): Refusal[] {
    const since = this.now() - this.windowMs;
    return [...this.last.values()].filter((r) => r.at >= since).sort((a, b) => a.store.localeCompare(b.store));
  }
}
