// One execution as GET …/executions/{trace_id} shows it: the stored detail, with why it failed
// and the name of the API key that sent it. A traced execution assembled before its failed spans
// named a reason (or by an older rule that took the first failed span read) gets the reason from
// its spans here (error-reason.ts), so the page never shows "error" without one the spans carry.
import type { ExecutionDetail } from './execution-detail-repository.ts';
import { errorReason, type FailedSpanFields } from './error-reason.ts';
import { withKeyNames, type KeyNames } from './key-names.ts';

export interface ExecutionViewDeps {
  detail: Pick<ExecutionDetail, 'get'>;
  /** The failed spans of a trace (span-repository.ts). */
  failedSpans(projectId: string, traceId: string): Promise<FailedSpanFields[]>;
  /** key_id → name of the project's keys (auth/api-key-repository.ts, PostgreSQL). */
  keyNames: KeyNames;
}

export function createExecutionView(deps: ExecutionViewDeps) {
  return {
    async get(projectId: string, traceId: string, includeMessages: boolean) {
      const e = await deps.detail.get(projectId, traceId, includeMessages);
      if (!e) return undefined;
      const [reason, [named]] = await Promise.all([
        e.status === 'error' && !e.error_message && e.source === 'otlp'
          ? deps.failedSpans(projectId, traceId).then(errorReason)
          : Promise.resolve(''),
        withKeyNames(deps.keyNames, projectId, [e]),
      ]);
      return { ...named!, error_message: e.error_message ?? (reason || null) };
    },
  };
}

export type ExecutionView = ReturnType<typeof createExecutionView>;
