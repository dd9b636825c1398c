// Builds the OpenAPI 3.1 document from the route definitions (server/http/api-router.ts). JSON
// Schema comes from zod 4's own `z.toJSONSchema` (draft 2020-12, which OpenAPI 3.1 uses): request
// schemas as the input they accept, response schemas as the output they produce. Named schemas
// (`.meta({ id })`) are hoisted into `components.schemas`.
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../../errors.ts';
import type { OperationSpec, ResponseSpec, RouteAuth } from '../api-router.ts';
import { ErrorEnvelope } from './common.ts';

/** Codes any operation can answer: refused input (path, query, body), header overflow, outages. */
const EVERY_OPERATION: ErrorCode[] = ['invalid_request', 'headers_too_large', 'internal', 'unavailable'];

type JsonSchema = Record<string, unknown>;

export interface DocumentOptions {
  publicUrl: string;
  version: string;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  303: 'See other',
};

const SECURITY: Record<RouteAuth, Record<string, string[]>[]> = {
  none: [],
  any: [{ session: [] }, { sessionCookie: [] }, { agentKey: [] }, { oauth: ['mcp'] }],
  human: [{ session: [] }, { sessionCookie: [] }],
};

export function buildOpenApiDocument(operations: readonly OperationSpec[], opts: DocumentOptions) {
  const schemas: Record<string, JsonSchema> = {};

  /** zod → JSON Schema; named sub-schemas move to components.schemas (one definition per name). */
  function convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const raw = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any', reused: 'inline' }) as JsonSchema;
    const json = JSON.parse(JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    delete json.$schema;
    for (const [id, def] of Object.entries(defs)) {
      const existing = schemas[id];
      if (existing && JSON.stringify(existing) !== JSON.stringify(def)) throw new Error(`two different schemas are named ${id}`);
      schemas[id] = def;
    }
    if (typeof json.id === 'string') {
      // The schema itself is named: register it and point at it.
      const { id, ...rest } = json;
      const existing = schemas[id];
      if (existing && JSON.stringify(existing) !== JSON.stringify(rest)) throw new Error(`two different schemas are named ${id}`);
      schemas[id] = rest;
      return { $ref: `#/components/schemas/${id}` };
    }
    return json;
  }

  function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query' | 'header') {
    if (!schema) return [];
    const json = convert(schema, 'input');
    const props = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required ?? []) as string[]);
    return Object.entries(props).map(([name, s]) => {
      const { description, ...rest } = s;
      return {
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(typeof description === 'string' ? { description } : {}),
        schema: rest,
      };
    });
  }

  function response(status: number, spec: ResponseSpec) {
    const description = STATUS_TEXT[status] ?? 'Success';
    if (spec === null) return { description };
    if (spec instanceof z.ZodType) return { description, content: { 'application/json': { schema: convert(spec, 'output') } } };
    return {
      description: spec.description,
      ...(spec.headers ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) } : {}),
      ...(spec.contentType
        ? { content: Object.fromEntries([spec.contentType].flat().map((t) => [t, { schema: spec.schema ? convert(spec.schema, 'output') : { type: 'string' } }])) }
        : {}),
    };
  }

  const envelopeRef = convert(ErrorEnvelope, 'output');

  function errorResponses(op: OperationSpec) {
    if (op.errorStyle === 'oauth') return {};
    const codes = new Set<ErrorCode>(EVERY_OPERATION);
    if (op.auth !== 'none') {
      codes.add('unauthenticated');
      // Agents are refused every route their authority table does not open (server/auth/authority.ts).
      codes.add('forbidden');
    }
    if (op.body) codes.add('payload_too_large');
    for (const c of op.errors ?? []) codes.add(c);
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes) byStatus.set(ERROR_STATUS[c], [...(byStatus.get(ERROR_STATUS[c]) ?? []), c]);
    const out: Record<string, unknown> = {};
    for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
      if (op.responses[status] !== undefined) throw new Error(`${op.method} ${op.path}: status ${status} is both a success and an error`);
      out[String(status)] = {
        description: `Error: ${list.join(', ')}`,
        ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } } : {}),
        content: {
          'application/json': {
            schema: { allOf: [envelopeRef, { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } }] },
          },
          ...(op.htmlErrors ? { 'text/html': { schema: { type: 'string' } } } : {}),
        },
      };
    }
    return out;
  }

  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const op of operations) {
    const declared = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).sort();
    const described = Object.keys(op.params?.shape ?? {}).sort();
    if (declared.join() !== described.join()) throw new Error(`${op.method} ${op.path}: path parameters ${declared.join()} but schema ${described.join()}`);
    const item = (paths[op.path] ??= {});
    if (item[op.method]) throw new Error(`${op.method} ${op.path} is defined twice`);
    for (const t of op.tags ?? []) tags.add(t);
    const parameters = [...parametersOf(op.params, 'path'), ...parametersOf(op.query, 'query'), ...parametersOf(op.headers, 'header')];
    item[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: op.tags ?? [],
      security: SECURITY[op.auth ?? 'any'],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(op.body
        ? { requestBody: { required: !op.bodyOptional, content: { [op.bodyType ?? 'application/json']: { schema: convert(op.body, 'input') } } } }
        : {}),
      responses: {
        ...Object.fromEntries(Object.entries(op.responses).map(([status, spec]) => [status, response(Number(status), spec)])),
        ...errorResponses(op),
      },
    };
  }

  const base = opts.publicUrl.replace(/\/+$/, '');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Action Gateway',
      version: opts.version,
      description:
        'The REST API under /v1 (and the JSON endpoints of the OAuth 2.1 authorization server). Errors are ' +
        '`{"error": {"code", "message", "details"?}, "request_id"}`; each response lists the codes a route can answer.',
    },
    servers: [{ url: base }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'gws_…', description: 'A dashboard session token from POST /v1/auth/login.' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'gw_session', description: 'The same session as a cookie (the dashboard).' },
        agentKey: { type: 'http', scheme: 'bearer', bearerFormat: 'osk_…', description: 'A static agent key (POST /v1/identities/{id}/keys).' },
        oauth: {
          type: 'oauth2',
          description: 'An access token of the gateway’s own authorization server, bound to an agent.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${base}/oauth/authorize`,
              tokenUrl: `${base}/oauth/token`,
              refreshUrl: `${base}/oauth/token`,
              scopes: { mcp: 'Act as the bound agent (MCP and /v1).' },
            },
          },
        },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;
