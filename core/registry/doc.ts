// Read-only helpers for walking an untrusted, already-parsed OpenAPI document.
// Everything here tolerates arbitrary JSON: validation must never throw on a malformed file.

export type JsonObject = Record<string, unknown>;

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own-property read, so names like `constructor` never reach Object.prototype. */
export function own(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** JSON Pointer (RFC 6901) for problem paths; the same form Ajv uses in swagger-parser errors. */
export function pointer(...segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => '/' + String(s).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

const MAX_REF_HOPS = 16;

/**
 * Follows local `$ref: '#/...'` chains. Returns the node itself when it is not a reference and
 * undefined when a reference is external, dangling or cyclic (the validator reports those).
 */
export function deref(doc: unknown, node: unknown): unknown {
  let current = node;
  for (let hops = 0; hops < MAX_REF_HOPS; hops++) {
    if (!isObject(current) || !Object.hasOwn(current, '$ref')) return current;
    const ref = current['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
    current = lookupPointer(doc, ref.slice(1));
  }
  return undefined;
}

function lookupPointer(doc: unknown, ptr: string): unknown {
  if (ptr === '') return doc;
  if (!ptr.startsWith('/')) return undefined;
  let current: unknown = doc;
  for (const raw of ptr.slice(1).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(key)) return undefined;
      current = current[Number(key)];
    } else if (isObject(current)) {
      current = own(current, key);
    } else {
      return undefined;
    }
  }
  return current;
}

export interface OperationRef {
  path: string;
  method: HttpMethod;
  pathItem: JsonObject;
  operation: unknown;
}

/** Every `paths.<path>.<method>` entry, in document order. */
export function listOperations(doc: JsonObject): OperationRef[] {
  const paths = own(doc, 'paths');
  if (!isObject(paths)) return [];
  const out: OperationRef[] = [];
  for (const [path, rawItem] of Object.entries(paths)) {
    const pathItem = deref(doc, rawItem);
    if (!isObject(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      if (Object.hasOwn(pathItem, method)) out.push({ path, method, pathItem, operation: pathItem[method] });
    }
  }
  return out;
}

/** `{name}` placeholders in a path or summary-like template, in order of appearance. */
export function templatePlaceholders(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => (m[1] ?? '').trim());
}

export interface ParamEntry {
  /** Pointer segments of the entry as written (path-level or operation-level). */
  at: string[];
  /** The entry with local `$ref`s followed; undefined when the reference does not resolve. */
  value: unknown;
}

/**
 * Path-level parameters merged with operation-level ones; an operation entry overrides a
 * path-level entry with the same `name` and `in`, as OpenAPI specifies.
 */
export function effectiveParameters(doc: JsonObject, ref: OperationRef): ParamEntry[] {
  const collect = (list: unknown, at: string[]): ParamEntry[] =>
    Array.isArray(list) ? list.map((p, i) => ({ at: [...at, String(i)], value: deref(doc, p) })) : [];
  const op = isObject(ref.operation) ? ref.operation : {};
  const pathLevel = collect(own(ref.pathItem, 'parameters'), ['paths', ref.path, 'parameters']);
  const opLevel = collect(own(op, 'parameters'), ['paths', ref.path, ref.method, 'parameters']);
  const id = (e: ParamEntry): string | undefined =>
    isObject(e.value) ? `${String(own(e.value, 'in'))}:${String(own(e.value, 'name'))}` : undefined;
  const overridden = new Set(opLevel.map(id).filter((x) => x !== undefined));
  return [...pathLevel.filter((e) => !overridden.has(id(e) ?? '')), ...opLevel];
}

/** Top-level property names of a body schema. */
export function bodyPropertyNames(schema: JsonObject | undefined): string[] {
  const props = schema === undefined ? undefined : own(schema, 'properties');
  return isObject(props) ? Object.keys(props) : [];
}
