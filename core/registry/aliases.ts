// Rewrites bare extension names (`risk`, `scope_param`, `key`, ...) to the canonical
// `x-gateway-<name>` form, but only at the positions where the spec defines them: a schema
// property literally called `key` is ordinary OpenAPI and must stay untouched.
//
// Accepted spellings of one field: bare `scope_param`, canonical `x-gateway-scope_param`, and
// kebab `x-gateway-scope-param`. More than one spelling on one object is `ambiguous_alias`; the
// canonical (then kebab, then bare) value is kept so the output is still normalised.

import { HTTP_METHODS, isObject, own, pointer, type JsonObject } from './doc.ts';
import type { Problem } from './types.ts';

export const EXTENSION_PREFIX = 'x-gateway-';

/** Extension names allowed at each position of a service document. */
export const EXTENSIONS = {
  document: ['runtime', 'mcp', 'idempotency_key_header'],
  info: ['key', 'category'],
  operation: ['risk', 'scope_param', 'disclose', 'redact', 'response_type', 'disabled', 'tool', 'tool_pin'],
  parameter: ['resolve'],
  securityScheme: ['provider', 'default_secret_name', 'prefix', 'path_param'],
  pathItem: [],
} as const satisfies Record<string, readonly string[]>;

export type ExtensionPosition = keyof typeof EXTENSIONS;

/** Canonical key of an extension, e.g. `ext('scope_param')` is `x-gateway-scope_param`. */
export function ext(name: string): string {
  return EXTENSION_PREFIX + name;
}

export interface NormalizeResult {
  doc: unknown;
  problems: Problem[];
}

/** Pure: returns a normalised deep copy; the input is never mutated. Idempotent. */
export function normalizeAliases(input: unknown): NormalizeResult {
  const problems: Problem[] = [];
  if (!isObject(input)) return { doc: input, problems };
  const doc = structuredClone(input);
  rename(doc, 'document', [], problems);

  const info = own(doc, 'info');
  if (isObject(info)) rename(info, 'info', ['info'], problems);

  const paths = own(doc, 'paths');
  if (isObject(paths)) {
    for (const [path, item] of Object.entries(paths)) {
      if (!isObject(item)) continue;
      eachParameter(own(item, 'parameters'), ['paths', path, 'parameters'], problems);
      for (const method of HTTP_METHODS) {
        const op = own(item, method);
        if (!isObject(op)) continue;
        rename(op, 'operation', ['paths', path, method], problems);
        eachParameter(own(op, 'parameters'), ['paths', path, method, 'parameters'], problems);
      }
    }
  }

  const components = own(doc, 'components');
  if (isObject(components)) {
    const params = own(components, 'parameters');
    if (isObject(params)) {
      for (const [name, p] of Object.entries(params)) {
        if (isObject(p)) rename(p, 'parameter', ['components', 'parameters', name], problems);
      }
    }
    const schemes = own(components, 'securitySchemes');
    if (isObject(schemes)) {
      for (const [name, s] of Object.entries(schemes)) {
        if (isObject(s)) rename(s, 'securityScheme', ['components', 'securitySchemes', name], problems);
      }
    }
  }
  return { doc, problems };
}

function eachParameter(list: unknown, at: string[], problems: Problem[]): void {
  if (!Array.isArray(list)) return;
  list.forEach((p, i) => {
    if (isObject(p)) rename(p, 'parameter', [...at, String(i)], problems);
  });
}

/** Spellings in priority order: canonical, kebab, bare. */
function spellings(name: string): string[] {
  const kebab = ext(name.replaceAll('_', '-'));
  return [...new Set([ext(name), kebab, name])];
}

function rename(obj: JsonObject, position: ExtensionPosition, at: string[], problems: Problem[]): void {
  for (const name of EXTENSIONS[position]) {
    const present = spellings(name).filter((k) => Object.hasOwn(obj, k));
    const winner = present[0];
    if (winner === undefined) continue;
    if (present.length > 1) {
      problems.push({
        code: 'ambiguous_alias',
        path: pointer(...at, ext(name)),
        message: `both ${present.map((k) => `'${k}'`).join(' and ')} are set; use only '${ext(name)}'`,
      });
    }
    const value = own(obj, winner);
    for (const k of present) delete obj[k];
    obj[ext(name)] = value;
  }
}
