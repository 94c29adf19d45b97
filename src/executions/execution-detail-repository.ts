// One execution, or those of a few traces, found through the trace index `execution_traces`:
// the detail (GET …/executions/{trace_id}), the trace views, datasets and judges read them.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { presentDetail, type DetailRow, type ListRow } from './present.ts';
import { LIST_COLUMNS } from './execution-filter.ts';

export function createExecutionDetail(ch: ClickHouseStore) {
  return {
    /**
     * The live executions of these traces (light columns; the conversation too with `withMessages`),
     * found through the trace index; a trace not assembled yet is simply absent.
     */
    async ofTraces(
      projectId: string,
      traceIds: string[],
      withMessages: boolean,
    ): Promise<Array<ListRow & { conversation_history?: string }>> {
      if (traceIds.length === 0) return [];
      const located = await ch.query<{ started_at: string }>(
        'SELECT DISTINCT started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids: traceIds },
        'executions.ofTraces.locate',
      );
      if (located.length === 0) return [];
      return ch.query<ListRow & { conversation_history?: string }>(
        `SELECT ${LIST_COLUMNS}${withMessages ? ', conversation_history' : ''} FROM executions FINAL
         WHERE project_id = {p:String} AND started_at IN {starts:Array(DateTime64(3, 'UTC'))} AND trace_id IN {ids:Array(String)} AND sign = 1
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { p: projectId, starts: located.map((l) => l.started_at), ids: traceIds },
        'executions.ofTraces',
      );
    },

    async get(projectId: string, traceId: string, includeMessages: boolean) {
      const [loc] = await ch.query<{ started_at: string }>(
        'SELECT started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id = {t:String} LIMIT 1',
        { p: projectId, t: traceId },
        'executions.get.locate',
      );
      if (!loc) return undefined;
      const [row] = await ch.query<DetailRow>(
        `SELECT ${LIST_COLUMNS}, ended_at, received_at, error_message, tokens_cached_in, tokens_cache_write_in, tokens_reasoning,
           toString(cost_computed_usd) AS cost_computed_text, price_id, usage_warnings, session_id, user_id, tags, metadata,
           \`tu.prompt_id\` AS tu_prompt_id, \`tu.version\` AS tu_version, \`tu.version_ref\` AS tu_version_ref, \`tu.role\` AS tu_role,
           \`tu.source\` AS tu_source, \`tu.message_index\` AS tu_message_index, template_inputs, environment,
           usage_details, pricing_context, cost_lines
           ${includeMessages ? ', conversation_history' : ''}
         FROM executions FINAL
         WHERE project_id = {p:String} AND started_at = toDateTime64({s:String}, 3, 'UTC') AND trace_id = {t:String} AND sign = 1
         LIMIT 1`,
        { p: projectId, s: loc.started_at, t: traceId },
        'executions.get',
      );
      return row ? presentDetail(row) : undefined;
    },
  };
}

export type ExecutionDetail = ReturnType<typeof createExecutionDetail>;
