// The OpenAPI 3.1 document, generated from the route table and the JSON Schemas in schema/api
// (the same files ajv validates requests with).
import type { JsonSchema } from './validation.ts';
import type { RouteDef } from './routes/types.ts';

const VERSION = '0.1.0';

/** `$ref: "Name"` between schema files becomes a component reference; `$id` stays out. */
function toComponent(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toComponent);
  if (schema && typeof schema === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema)) {
      if (k === '$id') continue;
      out[k] = k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? `#/components/schemas/${v}` : toComponent(v);
    }
    return out;
  }
  return schema;
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

export function buildOpenApi(routes: readonly RouteDef[], schemas: readonly JsonSchema[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
    const params: Array<Record<string, unknown>> = [...r.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (r.query) {
      const q = schemas.find((s) => s.$id === r.query) as
        { properties?: Record<string, Record<string, unknown>>; patternProperties?: Record<string, Record<string, unknown>> } | undefined;
      for (const [name, schema] of Object.entries(q?.properties ?? {})) {
        const { description, ...rest } = schema;
        params.push({ name, in: 'query', required: false, schema: rest, ...(description ? { description } : {}) });
      }
      // A family of parameters (score.<name>.gte, ...): named by its title, its pattern in the description.
      for (const [pattern, schema] of Object.entries(q?.patternProperties ?? {})) {
        const { description, title, ...rest } = schema;
        params.push({
          name: title,
          in: 'query',
          required: false,
          schema: rest,
          description: `${description ?? ''} (parameters matching ${pattern})`,
        });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      responses[status] = {
        description: res.description,
        ...(res.schema
          ? { content: { [res.contentType ?? 'application/json']: { schema: { $ref: `#/components/schemas/${res.schema}` } } } }
          : {}),
      };
    }
    // Statuses every route of a kind can answer, so clients see them without each route listing them.
    // Path parameters too: text no store can hold (NUL, a lone surrogate) is refused in any input.
    if (r.body || r.query || params.length > 0) {
      responses['400'] ??= errorResponse(
        'Malformed JSON, a schema violation or text no store can hold (NUL, a lone surrogate); `detail` names the field',
      );
    }
    if (r.body || r.rawBody) {
      responses['413'] ??= errorResponse('Body over the size limit');
      responses['415'] ??= errorResponse('Content-Type is not application/json');
    }
    if (r.access !== 'public') {
      responses['401'] ??= errorResponse('Unauthorized - No valid authentication provided');
      responses['403'] ??= errorResponse('Forbidden - User does not have access to this resource');
    }
    responses['503'] ??= errorResponse(
      'A store is unavailable or refuses writes (out of disk space, memory or connections, read-only; `detail` names the store and why); retry after `Retry-After` seconds',
    );
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      ...(params.length ? { parameters: params } : {}),
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${r.body}` } } } } }
        : r.rawBody
          ? {
              requestBody: {
                required: true,
                description: r.rawBody.description,
                content: Object.fromEntries(
                  Object.entries(r.rawBody.contentTypes).map(([type, schema]) => [
                    type,
                    schema ? { schema: { $ref: `#/components/schemas/${schema}` } } : {},
                  ]),
                ),
              },
            }
          : {}),
      responses,
      ...(r.access === 'public' ? { security: [] } : {}),
      // Which operations an ingest-scoped key may call (docs/identity.md); every other one is 403 for it.
      ...(r.ingest ? { 'x-ingest-key': true } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Traceloom API',
      version: VERSION,
      description: 'Prompt management and LLM observability. Errors are always {"detail": "..."}.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: Object.fromEntries(schemas.map((s) => [s.$id, toComponent(s)])),
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description:
            'A project API key (tl_...). A key of scope `ingest` may call only the operations marked `x-ingest-key: true` (sending data, an experiment: reading datasets and items, creating runs, linking items); any other answers 403',
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "A JWT from the deployment's identity provider, or a project API key (`Bearer tl_...`)",
        },
      },
    },
    security: [{ apiKey: [] }, { bearer: [] }],
  };
}
