// Builds the upstream HTTP request of a service action from the caller's flat `params`: path and
// query parameters by name, every other key a top-level property of the body (JSON or a form:
// the same object, encoded only as it leaves; see form-body.ts). Validates
// against the action's schemas (types, enums, required, unknown keys) and applies defaults.
// Pure: credentials are injected later, inside an activity.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { CompiledAction, CompiledParam, CompiledService } from '../registry/types.ts';
import { formFields } from './form-body.ts';

export interface BuiltRequest {
  method: string;
  url: string;
  /** Path and query parameter values after defaults, by name (the `params` of the projection). */
  params: Record<string, unknown>;
  body?: unknown;
}

export interface RequestProblem {
  field: string;
  message: string;
}

export type BuildResult = { ok: true; request: BuiltRequest } | { ok: false; problems: RequestProblem[] };

const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: false, validateFormats: false });
const compiledSchemas = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction | null {
  let fn = compiledSchemas.get(schema);
  if (!fn) {
    try {
      fn = ajv.compile(schema);
    } catch {
      return null; // a schema ajv cannot compile is not enforced; the loader accepted it
    }
    compiledSchemas.set(schema, fn);
  }
  return fn;
}

function checkValue(param: CompiledParam, value: unknown): string | null {
  const fn = validatorFor(param.schema.raw);
  if (!fn || fn(value)) return null;
  return fn.errors?.map((e) => `${e.instancePath || 'value'} ${e.message}`).join('; ') ?? 'is not valid';
}

function bodyProperties(action: CompiledAction): Set<string> | 'any' | null {
  const schema = action.bodySchema;
  if (!schema) return null;
  const props = schema.properties;
  if (props && typeof props === 'object') {
    return schema.additionalProperties === false || schema.additionalProperties === undefined
      ? new Set(Object.keys(props))
      : 'any';
  }
  return 'any';
}

function encodePathValue(value: unknown): string {
  return encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * A credential as one path segment: RFC 3986 `pchar`s (unreserved, sub-delims, `:`, `@`) stay as
 * they are, so Telegram's `123456:ABC-…` arrives verbatim; anything else (`/`, `?`, `#`, `%`,
 * spaces) is percent-encoded and cannot leave the segment.
 */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/%(3A|40|24|26|2B|2C|3B|3D)/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function queryValue(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/** What a path placeholder filled by a credential shows wherever the request is stored or displayed. */
export const PATH_SECRET_MASK = '***';

/**
 * `pathSecrets` fills the placeholders a credential supplies (an apiKey scheme with
 * `x-gateway-path_param`, e.g. Telegram's `/bot{token}/…`); the executor passes it at send time
 * only. Without it those placeholders read `***`, so a built URL never holds the secret.
 */
export function buildActionRequest(
  service: CompiledService,
  action: CompiledAction,
  input: Readonly<Record<string, unknown>>,
  pathSecrets: Readonly<Record<string, string>> = {},
): BuildResult {
  const problems: RequestProblem[] = [];
  const baseUrl = service.baseUrls[0];
  if (!baseUrl) return { ok: false, problems: [{ field: 'service', message: `service "${service.key}" has no server URL` }] };

  const params: Record<string, unknown> = {};
  const byName = new Map(action.parameters.map((p) => [p.name, p]));
  for (const p of action.parameters) {
    let value = input[p.name];
    if (value === undefined && p.schema.default !== undefined) value = p.schema.default;
    if (value === undefined || value === null) {
      if (p.required) problems.push({ field: p.name, message: `is required (${p.in} parameter)` });
      continue;
    }
    const problem = checkValue(p, value);
    if (problem) problems.push({ field: p.name, message: problem });
    else params[p.name] = value;
  }

  const allowedBody = bodyProperties(action);
  let body: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(input)) {
    if (byName.has(key)) continue;
    if (allowedBody === null || (allowedBody !== 'any' && !allowedBody.has(key))) {
      problems.push({ field: key, message: `is not a parameter of ${service.key}.${action.key}` });
      continue;
    }
    (body ??= {})[key] = value;
  }
  if (action.bodySchema) {
    const defaults = (action.bodySchema.properties ?? {}) as Record<string, { default?: unknown }>;
    for (const [key, prop] of Object.entries(defaults)) {
      if (prop && typeof prop === 'object' && prop.default !== undefined && (body === undefined || !(key in body))) (body ??= {})[key] = prop.default;
    }
    if (body === undefined && action.bodyRequired) body = {};
    if (body !== undefined) {
      const fn = validatorFor(action.bodySchema);
      if (fn && !fn(body)) {
        for (const e of fn.errors ?? []) {
          const missing = e.keyword === 'required' ? String((e.params as { missingProperty?: string }).missingProperty) : undefined;
          problems.push({ field: missing ?? (e.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'body'), message: missing ? 'is required (body property)' : String(e.message) });
        }
      }
    }
    // A form body is refused here, before any approval, when its encoding cannot carry it faithfully.
    if (body !== undefined && action.bodyForm && problems.length === 0) {
      const encoded = formFields(body, action.bodyForm);
      if (!encoded.ok) problems.push(...encoded.problems);
    }
  }
  if (problems.length > 0) return { ok: false, problems };

  const url = actionUrl(baseUrl, action, params, pathSecrets);
  return { ok: true, request: { method: action.method, url, params, ...(body !== undefined ? { body } : {}) } };
}

/**
 * The URL of an action for parameter values `params`: path placeholders filled (a credential's
 * from `pathSecrets`, else `***`), query parameters appended in declaration order.
 */
export function actionUrl(baseUrl: string, action: CompiledAction, params: Readonly<Record<string, unknown>>, pathSecrets: Readonly<Record<string, string>> = {}): string {
  const pathParams = new Set(action.parameters.filter((p) => p.in === 'path').map((p) => p.name));
  const path = action.pathTemplate.replace(/\{([^}]+)\}/g, (_, name: string) =>
    pathParams.has(name) ? encodePathValue(params[name]) : Object.hasOwn(pathSecrets, name) ? encodePathSegment(pathSecrets[name]!) : PATH_SECRET_MASK,
  );
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const p of action.parameters) {
    if (p.in !== 'query' || params[p.name] === undefined) continue;
    const v = params[p.name];
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(p.name, queryValue(item));
    else url.searchParams.append(p.name, queryValue(v));
  }
  return url.toString();
}
