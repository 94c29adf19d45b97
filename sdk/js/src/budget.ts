// budget.check: the pre-flight check before an LLM call, cached briefly per question (the
// service answers from memory, but an agent may ask before every call). Concurrent identical
// checks share one request. When the service is unavailable the last answer for the same
// question is returned if there is one; otherwise the TraceloomUnavailableError is thrown and
// the caller decides whether to proceed.
import type { ResolvedOptions } from './config.ts';
import { TraceloomUnavailableError } from './errors.ts';
import type { Http } from './http.ts';

export interface BudgetCheckQuery {
  agentId?: string;
  userId?: string;
  tags?: string[];
  apiKeyId?: string;
}

/** As GET .../budget/check answers (schema/api/BudgetCheck.json). */
export interface BudgetCheck {
  allowed: boolean;
  status: 'ok' | 'alert' | 'exceeded';
  enforcement_mode: 'alert' | 'block' | null;
  remaining_usd: number | null;
  reset_at: string;
  budgets: Array<{
    id: string;
    scope: { kind: string; value: string | null };
    period: string;
    allowed: boolean;
    status: string;
    enforcement_mode: string;
    remaining_usd: number;
    reset_at: string;
  }>;
}

export class BudgetClient {
  private readonly cache = new Map<string, { answer: BudgetCheck; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<BudgetCheck>>();

  constructor(
    private readonly http: Http,
    private readonly o: ResolvedOptions,
  ) {}

  async check(q: BudgetCheckQuery = {}): Promise<BudgetCheck> {
    const query = { agent_id: q.agentId, user_id: q.userId, api_key_id: q.apiKeyId, tag: q.tags ? [...q.tags].sort() : undefined };
    const key = JSON.stringify(query);
    const hit = this.cache.get(key);
    if (hit && this.o.now() < hit.expiresAt) return hit.answer;
    let p = this.loading.get(key);
    if (!p) {
      p = this.http
        .project<BudgetCheck>('GET', '/budget/check', { query })
        .then((answer) => {
          this.cache.set(key, { answer, expiresAt: this.o.now() + this.o.budgetCacheTtlSeconds * 1000 });
          return answer;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    try {
      return await p;
    } catch (e) {
      if (e instanceof TraceloomUnavailableError && hit) return hit.answer;
      throw e;
    }
  }
}
