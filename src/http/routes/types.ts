// The route table: every endpoint is declared once, with what it needs (access, body schema,
// responses). The router, the auth seam, the OpenAPI document and the tests all read it.
import type Koa from 'koa';
import type { Principal } from '../auth.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** `public`: no credentials (health, openapi). `authenticated`: a principal is required. */
export type Access = 'public' | 'authenticated';

export interface ResponseDef {
  description: string;
  /** Schema id in schema/api; omitted for empty bodies (204). */
  schema?: string;
  /** Content type when not JSON. */
  contentType?: string;
}

export interface RouteState {
  requestId: string;
  principal?: Principal;
  /** The request body, parsed and validated against the route's `body` schema. */
  body?: unknown;
}

export type RouteContext = Koa.ParameterizedContext<RouteState> & { params: Record<string, string> };

export interface RouteDef {
  method: HttpMethod;
  /** Path with `:name` parameters, e.g. `/api/projects/:project_id/prompts`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  access: Access;
  /** Schema id of the JSON request body in schema/api. */
  body?: string;
  responses: Record<number, ResponseDef>;
  handler(ctx: RouteContext): Promise<void>;
}
