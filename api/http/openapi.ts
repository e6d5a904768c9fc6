import { TSchema } from '@sinclair/typebox';
import { ErrorCatalogue, ErrorCode } from '../../lib/errors';
import { AnyRoute, declaredErrors } from './route';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_SCHEMA } from './idempotency';

const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

/** The declared codes grouped by the status the catalogue gives each. */
function problemsByStatus(codes: ErrorCode[]): Map<string, ErrorCode[]> {
  const byStatus = new Map<string, ErrorCode[]>();
  for (const code of codes) {
    const status = String(ErrorCatalogue[code].status);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

/** The problem+json schema, its `code` held to the codes a route declares for one status. */
function problemSchemaFor(codes: ErrorCode[]): unknown {
  return { ...PROBLEM_SCHEMA, properties: { ...PROBLEM_SCHEMA.properties, code: { type: 'string', enum: codes } } };
}

function plain(schema: TSchema): unknown {
  // TypeBox marks schemas with symbol keys; JSON round-tripping leaves pure JSON Schema.
  return JSON.parse(JSON.stringify(schema));
}

function parameters(schema: TSchema | undefined, where: 'query' | 'path'): unknown[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = (schema.required ?? []) as string[];
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.includes(name),
    schema: plain(property),
  }));
}

function security(route: AnyRoute): unknown[] {
  switch (route.access.kind) {
    case 'public':
      return [];
    case 'internal':
      return [{ internalToken: [] }];
    case 'roles-or-internal':
      return [{ bearerJwt: [] }, { internalToken: [] }];
    default:
      return [{ bearerJwt: [] }];
  }
}

const operationId = (route: AnyRoute) => `${route.method}${route.path.replace(/[^A-Za-z0-9]+/g, '_')}`;

/**
 * The links of a create (201) answer: every route under `{its path}/:id` takes the created `id`. Clients and
 * the fuzzer's stateful phase follow them from a new entity to what can be done with it.
 */
function linksOf(route: AnyRoute, routes: AnyRoute[]): Record<string, unknown> | undefined {
  if (!route.responses[201]) return undefined;
  const under = `${route.path}/:id`;
  const targets = routes.filter((other) => other.path === under || other.path.startsWith(`${under}/`));
  if (targets.length === 0) return undefined;
  return Object.fromEntries(targets.map((target) => [operationId(target), { operationId: operationId(target), parameters: { id: '$response.body#/id' } }]));
}

/** The OpenAPI 3.1 document, built from the same route definitions and schemas that validate requests. */
export function buildOpenApi(routes: AnyRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const who =
      route.access.kind === 'roles' || route.access.kind === 'roles-or-internal'
        ? ` Roles: ${route.access.roles.join(', ')}${route.access.kind === 'roles-or-internal' ? ' or the internal token' : ''}.`
        : route.access.kind === 'internal'
          ? ' Internal token only.'
          : '';
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const links = status === '201' ? linksOf(route, routes) : undefined;
      responses[status] = {
        description: spec.description,
        ...(links ? { links } : {}),
        ...(spec.schema ? { content: { [spec.contentType ?? 'application/json']: { schema: plain(spec.schema) } } } : {}),
      };
    }
    for (const [status, codes] of problemsByStatus(declaredErrors(route))) {
      // A route's own spec for an error status (readiness's 503 carries its checks) stands as written.
      if (responses[status]) continue;
      responses[status] = {
        description: codes.map((code) => `${code}: ${ErrorCatalogue[code].title}`).join('; '),
        content: { 'application/problem+json': { schema: problemSchemaFor(codes) } },
      };
    }
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: operationId(route),
      tags: [route.tag],
      summary: route.summary,
      description: `${route.summary}.${who}`,
      security: security(route),
      parameters: [
        ...parameters(route.params, 'path'),
        ...parameters(route.query, 'query'),
        ...(route.idempotent
          ? [
              {
                name: IDEMPOTENCY_HEADER,
                in: 'header',
                required: false,
                description: 'the same key and request within 24 h replays the first answer; another request 422; one still in flight 409',
                schema: IDEMPOTENCY_KEY_SCHEMA,
              },
            ]
          : []),
      ],
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: {
                [route.bodyType === 'multipart' ? 'multipart/form-data' : 'application/json']: { schema: plain(route.body) },
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Opsflow platform API', version: '0.1.0' },
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: {
        bearerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_TOKEN' },
      },
    },
  };
}
