// Monitors (docs/monitors.md). Thin: the route table validates; src/monitors/ does the work.
import type { Monitors } from '../../monitors/monitors.ts';
import type { MonitorInput, MonitorUpdate } from '../../monitors/monitor.ts';
import { allows, roleIn } from '../../auth/principal.ts';
import type { RouteContext, RouteDef } from './types.ts';

const P = '/api/projects/:project_id/monitors';
const ONE = `${P}/:monitor_id`;
const tag = 'monitors';
const notFound = { description: 'No such monitor in this project', schema: 'Error' };
const refused = { description: 'filter.prompt_id names no prompt of the project, or the prompt has no baseline label', schema: 'Error' };

/** Whether the caller may change monitors: it sees their webhook URLs in full. */
const canChange = (ctx: RouteContext) => {
  const role = ctx.state.principal && roleIn(ctx.state.principal, ctx.state.projectId!);
  return role !== undefined && allows(role, 'write');
};

export function monitorRoutes(monitors: Monitors): RouteDef[] {
  return [
    {
      method: 'POST',
      path: P,
      operationId: 'createMonitor',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'MonitorCreate',
      summary: 'Add a monitor: a metric over a filter and a window, a threshold or a significant change, alerts to a webhook or Slack',
      responses: {
        201: { description: 'The monitor (a signed-format answer carries the webhook secret, once)', schema: 'Monitor' },
        409: { description: 'A monitor of that name exists, or the project has MONITOR_MAX_PER_PROJECT monitors', schema: 'Error' },
        422: refused,
      },
      async handler(ctx) {
        ctx.status = 201;
        ctx.body = await monitors.create(ctx.state.projectId!, ctx.state.body as MonitorInput);
      },
    },
    {
      method: 'GET',
      path: P,
      operationId: 'listMonitors',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "The project's monitors with their state and last evaluation, by name",
      responses: { 200: { description: 'The monitors', schema: 'MonitorList' } },
      async handler(ctx) {
        ctx.body = await monitors.list(ctx.state.projectId!, canChange(ctx));
      },
    },
    {
      method: 'GET',
      path: ONE,
      operationId: 'getMonitor',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One monitor with its state and last evaluation',
      responses: { 200: { description: 'The monitor', schema: 'Monitor' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await monitors.get(ctx.state.projectId!, ctx.params.monitor_id!, canChange(ctx));
      },
    },
    {
      method: 'PATCH',
      path: ONE,
      operationId: 'updateMonitor',
      tag,
      access: 'authenticated',
      need: 'write',
      body: 'MonitorUpdate',
      summary: "Change a monitor's fields; a changed definition is evaluated at the next tick",
      responses: {
        200: { description: 'The monitor', schema: 'Monitor' },
        404: notFound,
        409: { description: 'Another monitor has that name', schema: 'Error' },
        422: refused,
      },
      async handler(ctx) {
        ctx.body = await monitors.update(ctx.state.projectId!, ctx.params.monitor_id!, ctx.state.body as MonitorUpdate);
      },
    },
    {
      method: 'DELETE',
      path: ONE,
      operationId: 'deleteMonitor',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Delete a monitor and its alert history (alerts not yet delivered are dropped)',
      responses: { 204: { description: 'Deleted' }, 404: notFound },
      async handler(ctx) {
        await monitors.remove(ctx.state.projectId!, ctx.params.monitor_id!);
        ctx.status = 204;
      },
    },
    {
      method: 'POST',
      path: `${ONE}/evaluate`,
      operationId: 'evaluateMonitor',
      tag,
      access: 'authenticated',
      need: 'write',
      summary: 'Evaluate a monitor now: its figures, and the state change and alert they make, as a scheduled evaluation would',
      responses: { 200: { description: 'The evaluation', schema: 'MonitorEvaluation' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await monitors.evaluateNow(ctx.state.projectId!, ctx.params.monitor_id!);
      },
    },
    {
      method: 'GET',
      path: `${ONE}/alerts`,
      operationId: 'listMonitorAlerts',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'MonitorAlertListQuery',
      summary: "A monitor's alerts (triggered, resolved), newest first, with their figures and delivery; keyset pages",
      responses: { 200: { description: 'A page', schema: 'MonitorAlertList' }, 404: notFound },
      async handler(ctx) {
        ctx.body = await monitors.alerts(
          ctx.state.projectId!,
          ctx.params.monitor_id!,
          ctx.state.query as { limit: number; cursor?: string },
        );
      },
    },
  ];
}
