// Turns a normalised, validated service document into the in-memory definition.
// Pure; assumes validateServiceDocument() returned no problems (the loader guarantees it).

import { ext } from './aliases.ts';
import {
  deref,
  effectiveParameters,
  isObject,
  listOperations,
  own,
  type JsonObject,
  type OperationRef,
} from './doc.ts';
import { readRequestBody } from './request-body.ts';
import type {
  AuthMethod,
  CompiledAction,
  CompiledParam,
  CompiledService,
  DiscloseEntry,
  ResponseType,
  Risk,
  Runtime,
  ToolPinRef,
} from './types.ts';

export const HTTP_PSEUDO_SERVICE_KEY = 'http';

/** Spec default when an action declares no risk; same mapping as raw HTTP verbs. */
export function riskForMethod(method: string): Risk {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return 'read';
  if (m === 'DELETE') return 'delete';
  return 'write';
}

export function compileService(input: unknown, source: string): CompiledService {
  if (!isObject(input)) throw new TypeError('compileService needs a validated service document');
  const doc = input;
  const info = asObject(own(doc, 'info'));
  const servers = Array.isArray(own(doc, 'servers')) ? (own(doc, 'servers') as unknown[]) : [];
  const baseUrls = servers.map((s) => String(own(asObject(s), 'url')).replace(/\/+$/, ''));
  const authMethods = compileAuthMethods(doc);
  const actions = new Map<string, CompiledAction>();
  for (const ref of listOperations(doc)) {
    const action = compileAction(doc, ref, authMethods);
    actions.set(action.key, action);
  }
  const runtime = (own(doc, ext('runtime')) as Runtime | undefined) ?? 'http';
  const mcp = asObject(own(doc, ext('mcp')));
  return {
    key: String(own(info, ext('key'))),
    title: String(own(info, 'title')),
    ...optionalString('description', own(info, 'description')),
    ...optionalString('category', own(info, ext('category'))),
    hosts: [...new Set(baseUrls.map((u) => new URL(u).hostname.toLowerCase()))],
    baseUrls,
    authMethods,
    runtime,
    ...(runtime === 'mcp' ? { mcp: { url: String(own(mcp, 'url')), ...(typeof own(mcp, 'timeout_ms') === 'number' ? { timeoutMs: own(mcp, 'timeout_ms') as number } : {}) } } : {}),
    ...optionalString('idempotencyKeyHeader', own(doc, ext('idempotency_key_header'))),
    actions,
    source,
  };
}

/** The always-present raw HTTP pseudo-service: the caller supplies the full URL. */
export function httpPseudoService(): CompiledService {
  return {
    key: HTTP_PSEUDO_SERVICE_KEY,
    title: 'Raw HTTP',
    description: 'Direct HTTP calls; the caller supplies the full URL and per-call secrets.',
    category: 'Platform',
    hosts: [],
    baseUrls: [],
    authMethods: [],
    runtime: 'http',
    actions: new Map(),
    source: 'builtin:http',
  };
}

function compileAuthMethods(doc: JsonObject): AuthMethod[] {
  const schemes = asObject(own(asObject(own(doc, 'components')), 'securitySchemes'));
  const out: AuthMethod[] = [];
  for (const [name, raw] of Object.entries(schemes)) {
    const s = asObject(deref(doc, raw));
    const type = own(s, 'type');
    const secret = String(own(s, ext('default_secret_name')));
    if (type === 'apiKey') {
      const prefix = own(s, ext('prefix'));
      const pathParam = own(s, ext('path_param'));
      out.push({
        type: 'apiKey',
        name,
        in: typeof pathParam === 'string' ? 'path' : own(s, 'in') === 'query' ? 'query' : 'header',
        paramName: typeof pathParam === 'string' ? pathParam : String(own(s, 'name')),
        ...(typeof prefix === 'string' ? { prefix } : {}),
        defaultSecretName: secret,
      });
    } else if (type === 'oauth2') {
      const flow = asObject(own(asObject(own(s, 'flows')), 'authorizationCode'));
      out.push({
        type: 'oauth2',
        name,
        provider: String(own(s, ext('provider'))),
        authorizationUrl: String(own(flow, 'authorizationUrl')),
        tokenUrl: String(own(flow, 'tokenUrl')),
        scopes: Object.keys(asObject(own(flow, 'scopes'))),
      });
    } else if (type === 'http') {
      out.push({ type: 'http', name, scheme: 'bearer', defaultSecretName: secret });
    }
  }
  return out;
}

function compileAction(doc: JsonObject, ref: OperationRef, auth: AuthMethod[]): CompiledAction {
  const op = asObject(ref.operation);
  const method = ref.method.toUpperCase();
  const reading = readRequestBody(doc, op);
  const body = reading?.ok ? reading.media : undefined;
  const requestBody = asObject(deref(doc, own(op, 'requestBody')));
  const scopeParam = own(op, ext('scope_param'));
  const description = own(op, 'description');
  const tool = own(op, ext('tool'));
  const toolPin = own(op, ext('tool_pin'));
  const { requiredScopes, securitySchemes } = effectiveSecurity(doc, op, auth);
  return {
    key: String(own(op, 'operationId')),
    method,
    pathTemplate: ref.path,
    summary: String(own(op, 'summary')),
    ...(typeof description === 'string' ? { description } : {}),
    parameters: effectiveParameters(doc, ref)
      .map((p) => asObject(p.value))
      .filter((p) => own(p, 'in') !== 'header')
      .map((p) => compileParam(doc, p)),
    ...fixedHeaders(doc, ref),
    ...(body !== undefined ? { bodySchema: body.schema } : {}),
    ...(body?.form !== undefined ? { bodyForm: body.form } : {}),
    bodyRequired: own(requestBody, 'required') === true,
    risk: (own(op, ext('risk')) as Risk | undefined) ?? riskForMethod(method),
    ...(typeof scopeParam === 'string' ? { scopeParam } : {}),
    requiredScopes,
    ...(securitySchemes !== undefined ? { securitySchemes } : {}),
    disclose: compileDisclose(own(op, ext('disclose'))),
    redact: Array.isArray(own(op, ext('redact'))) ? (own(op, ext('redact')) as string[]) : [],
    responseType: (own(op, ext('response_type')) as ResponseType | undefined) ?? 'json',
    disabled: own(op, ext('disabled')) === true,
    ...(typeof tool === 'string' ? { tool } : {}),
    ...(isObject(toolPin) ? { toolPin: toolPin as unknown as ToolPinRef } : {}),
  };
}

/** Header parameters are fixed headers (validate.ts requires a string `const`), not call arguments. */
function fixedHeaders(doc: JsonObject, ref: OperationRef): { fixedHeaders?: Record<string, string> } {
  const headers: Record<string, string> = {};
  for (const { value } of effectiveParameters(doc, ref)) {
    const p = asObject(value);
    if (own(p, 'in') === 'header') headers[String(own(p, 'name'))] = String(own(asObject(deref(doc, own(p, 'schema'))), 'const'));
  }
  return Object.keys(headers).length > 0 ? { fixedHeaders: headers } : {};
}

function compileParam(doc: JsonObject, p: JsonObject): CompiledParam {
  const where = own(p, 'in') === 'path' ? 'path' : 'query';
  const schema = asObject(deref(doc, own(p, 'schema')));
  const description = own(p, 'description');
  const resolve = own(p, ext('resolve'));
  const enumValues = own(schema, 'enum');
  return {
    name: String(own(p, 'name')),
    in: where,
    required: where === 'path' || own(p, 'required') === true,
    ...(typeof description === 'string' ? { description } : {}),
    schema: {
      type: own(schema, 'type') as string | string[],
      ...(Array.isArray(enumValues) ? { enum: enumValues } : {}),
      ...(Object.hasOwn(schema, 'default') ? { default: schema['default'] } : {}),
      raw: schema,
    },
    ...(isObject(resolve) ? { resolve: { get: String(own(resolve, 'get')), pick: String(own(resolve, 'pick')) } } : {}),
  };
}

/**
 * OpenAPI semantics: an operation's `security` replaces the document-level one, so the default
 * ("the service's scopes") is the root requirement; `security: []` means no scopes at all.
 * Scopes are the union of what the requirements list for oauth2 schemes.
 */
function effectiveSecurity(
  doc: JsonObject,
  op: JsonObject,
  auth: AuthMethod[],
): { requiredScopes: string[]; securitySchemes?: string[] } {
  const security = Object.hasOwn(op, 'security') ? own(op, 'security') : own(doc, 'security');
  if (!Array.isArray(security)) return { requiredScopes: [] };
  const oauth = new Set(auth.filter((a) => a.type === 'oauth2').map((a) => a.name));
  const scopes = new Set<string>();
  const schemes = new Set<string>();
  for (const req of security) {
    for (const [scheme, list] of Object.entries(asObject(req))) {
      schemes.add(scheme);
      if (oauth.has(scheme) && Array.isArray(list)) for (const s of list) scopes.add(String(s));
    }
  }
  return { requiredScopes: [...scopes], securitySchemes: [...schemes] };
}

function compileDisclose(value: unknown): DiscloseEntry[] {
  if (!Array.isArray(value)) return [];
  return value.map((raw) => {
    const entry = asObject(raw);
    const max = own(entry, 'max_chars');
    return {
      label: String(own(entry, 'label')),
      filter: String(own(entry, 'filter')),
      ...(typeof max === 'number' ? { maxChars: max } : {}),
    };
  });
}

function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

function optionalString<K extends string>(key: K, value: unknown): { [P in K]?: string } {
  return (typeof value === 'string' ? { [key]: value } : {}) as { [P in K]?: string };
}
