// One vendor operation → one action of the template, or the reason it is skipped. Pure: the
// caller hands it the dereferenced operation and what it needs from the rest of the document.
import mergeAllOf from 'json-schema-merge-allof';
import { mapRequirements, type AuthMapping } from './auth.ts';
import { baseType, FORM_TYPES, isFileSchema, isJsonType, responseType } from './media.ts';
import { actionName, suggestScopeParam, summaryTemplate } from './naming.ts';
import { isObject, type JsonObject } from './normalize.ts';
import { cutSchema } from './schema-cut.ts';

export interface OperationInput {
  method: string;
  path: string;
  operation: JsonObject;
  pathParameters: unknown[];
  auth: AuthMapping;
  names: Set<string>;
}

export type OperationResult =
  | { ok: true; action: JsonObject; warnings: string[] }
  | { ok: false; reason: string };

const JSON_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'array', 'object', 'null']);
/**
 * An action's description is its first paragraph, at most this long, like the built-in ones:
 * gateway_search tokenizes every action's description on every query, and the vendor's long
 * markdown (notes, links, tables) stays in the vendor's documentation.
 */
const ACTION_DESCRIPTION_MAX = 300;
const DESCRIPTION_MAX = 1000;

export function mapOperation(input: OperationInput): OperationResult {
  const { method, path, operation } = input;
  const warnings: string[] = [];
  const warn = (text: string): void => void warnings.push(text);
  if (isObject(operation['callbacks']) && Object.keys(operation['callbacks']).length > 0) {
    return { ok: false, reason: 'declares callbacks, which the gateway cannot receive' };
  }

  const params = mergeParameters(input.pathParameters, operation['parameters']);
  const parameters: JsonObject[] = [];
  for (const p of params) {
    const where = p['in'];
    const name = String(p['name']);
    if (where === 'cookie') {
      if (p['required'] === true) return { ok: false, reason: `needs cookie parameter '${name}', which the gateway cannot send` };
      warn(`optional cookie parameter '${name}' dropped`);
      continue;
    }
    if (where === 'header') {
      // A required header with one possible value (AWS's `X-Amz-Target`) is the operation's own:
      // a fixed header the executor sends. Any other would be the caller's to set, which it never is.
      const fixed = p['required'] === true ? fixedValue(p) : undefined;
      if (fixed !== undefined) parameters.push({ name, in: 'header', required: true, schema: { type: 'string', const: fixed } });
      else warn(`header parameter '${name}'${p['required'] === true ? ' (required)' : ''} dropped: templates send only fixed headers`);
      continue;
    }
    if (where !== 'path' && where !== 'query') continue;
    parameters.push(mapParameter(p, warn));
  }

  // A GET or HEAD carries no body the gateway would send (Stripe documents an empty form on each).
  const bodyless = method === 'get' || method === 'head';
  if (bodyless && operation['requestBody'] !== undefined && hasBodyFields(operation['requestBody'])) warn('request body of a GET/HEAD dropped');
  const body = bodyless ? undefined : mapRequestBody(operation['requestBody'], warn);
  if (typeof body === 'string') return { ok: false, reason: body };

  const names = new Set([...parameters.map((p) => String(p['name'])), ...bodyProperties(body?.schema)]);
  const pathParams = parameters.filter((p) => p['in'] === 'path').map((p) => String(p['name']));
  const required = [
    ...parameters.filter((p) => p['in'] === 'query' && p['required'] === true).map((p) => String(p['name'])),
    ...requiredProperties(body?.schema),
  ];
  const scope = suggestScopeParam(path, required);
  const action: JsonObject = {
    operationId: actionName(operation['operationId'], method, path, input.names),
    summary: summaryTemplate(operation['summary'], operation['description'], method, path, names, pathParams),
    ...actionDescription(operation['description']),
    'x-gateway-risk': method === 'get' || method === 'head' ? 'read' : method === 'delete' ? 'delete' : 'write',
    ...(scope !== undefined && names.has(scope) ? { 'x-gateway-scope_param': scope } : {}),
    ...(responseType(operation) === 'binary' ? { 'x-gateway-response_type': 'binary' } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body.requestBody } : {}),
  };
  const security = mapRequirements(operation['security'], input.auth);
  if (security) action['security'] = security;
  else if (Array.isArray(operation['security']) && operation['security'].length > 0) warn('its auth schemes are not mapped; it uses the service’s auth');
  if (operation['deprecated'] === true) warn('deprecated by the vendor');
  return { ok: true, action, warnings };
}

/** Path-level parameters with operation-level ones overriding the same name and place. */
function mergeParameters(pathLevel: unknown[], opLevel: unknown): JsonObject[] {
  const id = (p: JsonObject): string => `${String(p['in'])}:${String(p['name'])}`;
  const own = (Array.isArray(opLevel) ? opLevel : []).filter(isObject);
  const overridden = new Set(own.map(id));
  return [...pathLevel.filter(isObject).filter((p) => !overridden.has(id(p))), ...own].filter((p) => typeof p['name'] === 'string' && p['name'] !== '');
}

function mapParameter(p: JsonObject, warn: (text: string) => void): JsonObject {
  const name = String(p['name']);
  const schema = cutSchema(isObject(p['schema']) ? p['schema'] : contentSchema(p['content']) ?? {});
  const value = (isObject(schema.value) ? schema.value : {}) as JsonObject;
  if (schema.cut) warn(`parameter '${name}': a recursive schema was cut`);
  if (!hasJsonType(value['type'])) {
    const guessed = guessType(value);
    value['type'] = guessed;
    if (!('enum' in value)) warn(`parameter '${name}': no type in the vendor's schema, taken as ${guessed}`);
  }
  if (Array.isArray(value['enum']) && value['enum'].length === 0) delete value['enum'];
  // A required query parameter with one possible value (AWS's `Action=…`, `Version=…`) defaults to it.
  const only = p['in'] === 'query' && p['required'] === true ? fixedValue({ schema: value }) : undefined;
  if (only !== undefined && value['default'] === undefined) value['default'] = only;
  return {
    name,
    in: p['in'],
    required: p['in'] === 'path' ? true : p['required'] === true,
    ...(typeof p['description'] === 'string' && p['description'] !== '' ? { description: p['description'].slice(0, DESCRIPTION_MAX) } : {}),
    ...(p['style'] !== undefined ? { style: p['style'] } : {}),
    ...(typeof p['explode'] === 'boolean' ? { explode: p['explode'] } : {}),
    schema: value,
  };
}

/** The one string a parameter's schema allows (`const`, or an `enum` of one), if it allows only one. */
export function fixedValue(p: JsonObject): string | undefined {
  const schema = isObject(p['schema']) ? p['schema'] : {};
  if (typeof schema['const'] === 'string') return schema['const'];
  const values = schema['enum'];
  return Array.isArray(values) && values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
}

function hasJsonType(type: unknown): boolean {
  const list = Array.isArray(type) ? type : [type];
  return list.length > 0 && list.every((t) => typeof t === 'string' && JSON_TYPES.has(t));
}

function guessType(schema: JsonObject): string {
  const first = Array.isArray(schema['enum']) ? schema['enum'][0] : schema['default'];
  if (typeof first === 'number') return Number.isInteger(first) ? 'integer' : 'number';
  if (typeof first === 'boolean') return 'boolean';
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    const options = schema[key];
    if (Array.isArray(options)) {
      const typed = options.find((o) => isObject(o) && typeof o['type'] === 'string' && JSON_TYPES.has(o['type']));
      if (isObject(typed)) return String(typed['type']);
    }
  }
  if (isObject(schema['properties'])) return 'object';
  if (schema['items'] !== undefined) return 'array';
  return 'string';
}

function contentSchema(content: unknown): unknown {
  if (!isObject(content)) return undefined;
  const first = Object.values(content)[0];
  return isObject(first) ? first['schema'] : undefined;
}

interface MappedBody {
  requestBody: JsonObject;
  schema: JsonObject;
}

/**
 * The JSON body if there is one, else a form body (kept as `requestBody.content[<form type>]`
 * with its `encoding`, without file parts), else nothing; a string when the operation can only
 * be called with bytes the gateway cannot send (a binary upload, a required file part).
 */
function mapRequestBody(raw: unknown, warn: (text: string) => void): MappedBody | string | undefined {
  if (!isObject(raw) || !isObject(raw['content'])) return undefined;
  const content = raw['content'];
  const required = raw['required'] === true;
  const entries = Object.entries(content).filter(([, media]) => isObject(media)) as Array<[string, JsonObject]>;
  const json = entries.find(([type]) => isJsonType(type));
  const form = FORM_TYPES.map((t) => entries.find(([type]) => baseType(type) === t)).find((e) => e !== undefined);
  const chosen = json ?? form;
  if (!chosen) {
    const types = entries.map(([t]) => baseType(t)).join(', ') || 'no media type';
    if (required) return `its request body is a binary upload (${types})`;
    warn(`optional request body (${types}) dropped`);
    return undefined;
  }
  const [type, media] = chosen;
  const cut = cutSchema(isObject(media['schema']) ? media['schema'] : { type: 'object' });
  if (cut.cut) warn('request body: a recursive schema was cut');
  let schema = flattenAllOf((isObject(cut.value) ? cut.value : {}) as JsonObject, warn);
  const target = json ? 'application/json' : baseType(type);
  if (!json) {
    const stripped = withoutFileParts(schema);
    if (typeof stripped === 'string') return stripped;
    if (stripped.dropped.length > 0) warn(`optional file part(s) ${stripped.dropped.join(', ')} dropped`);
    schema = stripped.schema;
  }
  const encoding = !json && isObject(media['encoding']) ? { encoding: cutSchema(media['encoding']).value } : {};
  return { requestBody: { required, content: { [target]: { schema, ...encoding } } }, schema };
}

function withoutFileParts(schema: JsonObject): { schema: JsonObject; dropped: string[] } | string {
  const props = isObject(schema['properties']) ? schema['properties'] : {};
  const files = Object.keys(props).filter((name) => isFileSchema(props[name]));
  if (files.length === 0) return { schema, dropped: [] };
  const required = Array.isArray(schema['required']) ? schema['required'] : [];
  const needed = files.filter((f) => required.includes(f));
  if (needed.length > 0) return `needs file upload part(s) ${needed.join(', ')}, which the gateway cannot send`;
  const kept = Object.fromEntries(Object.entries(props).filter(([name]) => !files.includes(name)));
  return { schema: { ...schema, properties: kept }, dropped: files };
}

function bodyProperties(schema: JsonObject | undefined): string[] {
  return schema && isObject(schema['properties']) ? Object.keys(schema['properties']) : [];
}

function requiredProperties(schema: JsonObject | undefined): string[] {
  return schema && Array.isArray(schema['required']) ? schema['required'].filter((r): r is string => typeof r === 'string') : [];
}

function hasBodyFields(raw: unknown): boolean {
  if (!isObject(raw) || !isObject(raw['content'])) return false;
  return Object.values(raw['content']).some((media) => isObject(media) && isObject(media['schema']) && isObject(media['schema']['properties']) && Object.keys(media['schema']['properties']).length > 0);
}

/**
 * A call's arguments are the body's top-level properties, so a body composed with `allOf`
 * (Azure's, Stripe's expandable objects) is merged into one schema by json-schema-merge-allof; a
 * contradiction the merge cannot express keeps the vendor's schema and is reported.
 */
function flattenAllOf(schema: JsonObject, warn: (text: string) => void): JsonObject {
  if (!JSON.stringify(schema).includes('"allOf"')) return schema;
  try {
    return mergeAllOf(schema as never, {
      ignoreAdditionalProperties: true,
      // Keywords the merger has no rule for (discriminator, nullable, xml, …): the first value stays.
      resolvers: { defaultResolver: mergeAllOf.options.resolvers.title },
    }) as JsonObject;
  } catch (err) {
    warn(`request body: its allOf could not be merged (${err instanceof Error ? err.message.slice(0, 120) : String(err)}); properties inside it are not call arguments`);
    return schema;
  }
}

function actionDescription(raw: unknown): { description?: string } {
  if (typeof raw !== 'string') return {};
  const first = raw.trim().split(/\n\s*\n/)[0]!.replace(/\s+/g, ' ').trim();
  if (first === '') return {};
  return { description: first.length > ACTION_DESCRIPTION_MAX ? `${first.slice(0, ACTION_DESCRIPTION_MAX - 1)}…` : first };
}
