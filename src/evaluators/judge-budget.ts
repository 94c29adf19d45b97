// An evaluator's daily judge budget (docs/evaluators.md, "Daily judge budget"): a judgement starts
// only if what the evaluator's judge calls of the UTC day cost (read from the spend rollups), plus
// what the calls in flight on this node are expected to cost, plus one more call, stays within the
// budget. A call is expected to cost what the evaluator's last priced call did; until one is
// priced, its calls start one at a time, so the first cost is known before a second call starts.
// Nothing here touches a store: the day's spend is read through `spentToday`.
import { NANOS, toScaled } from '../decimal.ts';

/** `done` with the call's recorded cost, or nothing when it got no answer (nothing spent, nothing learnt). */
export type BudgetSlot = { ok: true; done(costNanos?: bigint): void } | { ok: false; spent: string };

interface State {
  inFlight: number;
  estimate?: bigint;
  /** Resolved when a call in flight ends (a call waiting for the first price tries again). */
  idle?: Promise<void>;
  wake?: () => void;
}

export function createJudgeBudget(spentToday: (projectId: string, evaluatorId: string) => Promise<string>) {
  const states = new Map<string, State>();
  return {
    /** A slot for one call of the evaluator, or the day's spend when the budget has no room for it. */
    async acquire(projectId: string, evaluatorId: string, budgetUsd: string): Promise<BudgetSlot> {
      const budget = toScaled(budgetUsd, NANOS);
      for (;;) {
        let s = states.get(evaluatorId);
        if (!s) states.set(evaluatorId, (s = { inFlight: 0 }));
        if (s.estimate === undefined && s.inFlight > 0) {
          s.idle ??= new Promise<void>((resolve) => (s!.wake = resolve));
          await s.idle;
          continue;
        }
        const spent = await spentToday(projectId, evaluatorId);
        // re-read: other judgements may have started or ended while the spend was read
        if (s.estimate === undefined && s.inFlight > 0) continue;
        const estimate = s.estimate ?? 0n;
        if (toScaled(spent, NANOS) + BigInt(s.inFlight) * estimate + estimate > budget || toScaled(spent, NANOS) >= budget)
          return { ok: false, spent };
        s.inFlight++;
        const state = s;
        return {
          ok: true,
          done(costNanos?: bigint) {
            state.inFlight--;
            if (costNanos !== undefined) state.estimate = costNanos;
            const wake = state.wake;
            state.idle = state.wake = undefined;
            wake?.();
            if (state.inFlight === 0 && state.estimate === undefined) states.delete(evaluatorId);
          },
        };
      }
    },
  };
}

export type JudgeBudget = ReturnType<typeof createJudgeBudget>;
