// The route table: every endpoint is declared once, with what it needs (access, body schema,
// responses). The router, the auth seam, the OpenAPI document and the tests all read it.
import type Koa from 'koa';
import type { Need, Principal } from '../../auth/principal.ts';

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
  /** The path's project, after the caller's access to it was checked. */
  projectId?: string;
  /** The request body, parsed and validated against the route's `body` schema. */
  body?: unknown;
  /** The query parameters, coerced and validated against the route's `query` schema. */
  query?: unknown;
  /** Set by a route whose body is an unbounded stream: the request deadline spares it (app.ts). */
  unboundedBody?: boolean;
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
  /** Role needed in the path's project (routes under /api/projects/:project_id); default read. */
  need?: Need;
  /** Whether `ingest`-scope API keys may call it (traces, executions, budget check, context, an experiment's dataset reads and run writes). */
  ingest?: boolean;
  /** Only a JWT may call it (key management): an API key gets 403. */
  jwtOnly?: boolean;
  /** Only the operator may call it (a request on the local admin socket): everyone else gets 403. */
  operatorOnly?: boolean;
  /** Schema id of the JSON request body in schema/api. */
  body?: string;
  /**
   * For a body that may be an array of items (a batch): what its problems call the items, as the
   * handler's domain messages do (`scores` → `scores[2].value: …`), for the schema's messages too.
   */
  batch?: string;
  /**
   * A body the handler reads itself (not JSON-validated by the chain): content type → schema id (or none), for the OpenAPI document.
   * `unbounded`: a stream of any size (an import), spared the request deadline (REQUEST_TIMEOUT_MS) and cut
   * only when no byte arrives for STREAM_IDLE_TIMEOUT_MS.
   */
  rawBody?: { description: string; contentTypes: Record<string, string | undefined>; unbounded?: boolean };
  /** Schema id of the query parameters in schema/api (unknown parameters are a 400). */
  query?: string;
  responses: Record<number, ResponseDef>;
  handler(ctx: RouteContext): Promise<void>;
}
