import type { Domain } from '../../compose/domain.ts';
import type { ExecutionInput } from '../../executions/record.ts';
import type { ActivityQuery, ListQuery } from '../../executions/execution-filter.ts';
import { notFound } from '../errors.ts';
import { apiKeyIdOf } from '../../auth/principal.ts';
import { toLines } from '../../exports/lines.ts';
import { Readable } from 'node:stream';
import type { RouteDef } from './types.ts';

const BASE = '/api/projects/:project_id/executions';
const tag = 'executions';

export function executionRoutes(domain: Domain): RouteDef[] {
  const { recorder, listing, view, views, sessions } = domain.executions;
  return [
    {
      method: 'POST',
      path: BASE,
      operationId: 'createExecution',
      tag,
      access: 'authenticated',
      need: 'write',
      ingest: true,
      body: 'ExecutionCreate',
      summary: 'Record an execution (idempotent on trace_id)',
      responses: {
        201: { description: 'Recorded', schema: 'Execution' },
        200: { description: 'Already recorded with the same content: the stored execution', schema: 'Execution' },
        409: { description: 'trace_id already recorded with different content', schema: 'Error' },
        422: { description: 'message_index out of range, unknown prompt or version', schema: 'Error' },
        503: { description: 'Write queue full or ClickHouse unavailable: nothing was written; retry after Retry-After', schema: 'Error' },
      },
      async handler(ctx) {
        const r = await recorder.record(ctx.state.projectId!, ctx.state.body as ExecutionInput, apiKeyIdOf(ctx.state.principal));
        ctx.status = r.created ? 201 : 200;
        ctx.body = r.execution;
      },
    },
    {
      method: 'GET',
      path: BASE,
      operationId: 'listExecutions',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ExecutionListQuery',
      summary:
        'List executions with filters and exclusions (`exclude_<field>`), newest first or by `sort` (cost_usd, latency_ms, tokens) and `order`; ' +
        "`scores` adds each item's latest value of those score names; `total`, and `next_cursor` for keyset pages in any order",
      responses: { 200: { description: 'A page', schema: 'ExecutionList' } },
      async handler(ctx) {
        ctx.body = await listing.list(ctx.state.projectId!, ctx.state.query as ListQuery);
      },
    },
    {
      // Registered before /:trace_id, which would otherwise take "export" for a trace id.
      method: 'GET',
      path: `${BASE}/export`,
      operationId: 'exportExecutions',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ExecutionExportQuery',
      summary: 'Stream every execution matching the list filters as JSON Lines, CSV or Parquet (no page limit, constant memory)',
      responses: {
        200: {
          description:
            'application/x-ndjson (format=jsonl), text/csv (format=csv) or application/vnd.apache.parquet (format=parquet: written by the engine, typed columns, plus user_id, session_id, tags, metadata, api_key_id)',
        },
      },
      async handler(ctx) {
        const { format, ...filters } = ctx.state.query as { format: 'csv' | 'jsonl' | 'parquet' } & Omit<
          ListQuery,
          'limit' | 'offset' | 'cursor'
        >;
        if (format === 'parquet') {
          const file = await domain.executions.parquet.temporary(listing.filterOf(ctx.state.projectId!, filters));
          ctx.set('Content-Type', 'application/vnd.apache.parquet');
          ctx.set('Content-Disposition', `attachment; filename="executions-${ctx.state.projectId}.parquet"`);
          ctx.length = file.bytes;
          ctx.body = file.stream;
          return;
        }
        const items = domain.executions.exports.export(ctx.state.projectId!, filters);
        const first = await items.next(); // errors (bad filter, store down) still become a status
        async function* all() {
          if (!first.done) yield first.value;
          yield* items;
        }
        ctx.set('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
        ctx.set('Content-Disposition', `attachment; filename="executions-${ctx.state.projectId}.${format}"`);
        ctx.body = Readable.from(toLines(all(), format));
      },
    },
    {
      method: 'GET',
      path: `${BASE}/:trace_id`,
      operationId: 'getExecution',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ExecutionDetailQuery',
      summary:
        'One execution with its scores and the name of the API key that sent it; error_message: why it failed, from the spans when ' +
        'the execution was traced; conversation_history only with include_messages=true',
      responses: {
        200: { description: 'The execution', schema: 'Execution' },
        404: { description: 'No such trace in this project', schema: 'Error' },
      },
      async handler(ctx) {
        const q = ctx.state.query as { include_messages: boolean };
        const [e, scores] = await Promise.all([
          view.get(ctx.state.projectId!, ctx.params.trace_id!, q.include_messages),
          domain.scores.service.ofTrace(ctx.state.projectId!, ctx.params.trace_id!),
        ]);
        if (!e) throw notFound('Execution');
        ctx.body = { ...e, scores };
      },
    },
    {
      method: 'GET',
      path: `${BASE}/:trace_id/hierarchy`,
      operationId: 'getExecutionHierarchy',
      tag,
      access: 'authenticated',
      need: 'read',
      summary:
        'The span tree: spans with their children, orphans (parent never received) as roots with orphan: true; ' +
        'a direct record: one synthetic root',
      responses: {
        200: { description: 'The tree', schema: 'Hierarchy' },
        404: { description: 'No such trace in this project', schema: 'Error' },
      },
      async handler(ctx) {
        const tree = await views.hierarchy(ctx.state.projectId!, ctx.params.trace_id!);
        if (!tree) throw notFound('Execution');
        ctx.body = tree;
      },
    },
    {
      method: 'GET',
      path: `${BASE}/:trace_id/timeline`,
      operationId: 'getExecutionTimeline',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'TimelineQuery',
      summary: 'Messages and tool calls in conversation order; compact_tools joins each call with its result',
      responses: {
        200: { description: 'The timeline', schema: 'Timeline' },
        404: { description: 'No such trace in this project', schema: 'Error' },
      },
      async handler(ctx) {
        const q = ctx.state.query as { compact_tools: boolean };
        const timeline = await views.timeline(ctx.state.projectId!, ctx.params.trace_id!, q.compact_tools);
        if (!timeline) throw notFound('Execution');
        ctx.body = timeline;
      },
    },
    ...(['session', 'user'] as const).map((by): RouteDef => ({
      method: 'GET',
      path: `/api/projects/:project_id/${by}s`,
      operationId: by === 'session' ? 'listSessions' : 'listUsers',
      tag,
      access: 'authenticated',
      need: 'read',
      query: by === 'session' ? 'SessionListQuery' : 'UserListQuery',
      summary:
        by === 'session'
          ? 'Sessions of a window (executions sharing a session_id): user, executions, errors, exact cost, tokens, first and last seen; ' +
            'their `total`, `offset` pages, `search` on session or user id, `sort` by last_seen, cost_usd, executions or errors'
          : 'Users of a window (executions sharing a user_id): sessions, executions, errors, exact cost, tokens, first and last seen',
      responses: { 200: { description: by === 'session' ? 'Sessions' : 'Users', schema: by === 'session' ? 'SessionList' : 'UserList' } },
      async handler(ctx) {
        ctx.body =
          by === 'session'
            ? await sessions.list.list(ctx.state.projectId!, ctx.state.query as ActivityQuery)
            : await listing.activity(ctx.state.projectId!, by, ctx.state.query as ActivityQuery);
      },
    })),
    {
      method: 'GET',
      path: '/api/projects/:project_id/sessions/:session_id/conversation',
      operationId: 'getSessionConversation',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'SessionConversationQuery',
      summary:
        'A session as one conversation: its executions oldest first, each with the messages it added to the conversation (those it repeats from the turn before are counted in earlier_messages); keyset pages by next_cursor',
      responses: { 200: { description: 'A page of turns (none for an unknown session)', schema: 'SessionConversation' } },
      async handler(ctx) {
        ctx.body = await sessions.conversation.page(
          ctx.state.projectId!,
          ctx.params.session_id!,
          ctx.state.query as { limit: number; cursor?: string },
        );
      },
    },
  ];
}
