// Gateway-specific rules for a normalised service document (see aliases.ts), on top of the
// structural OpenAPI 3.1 check the loader runs. Pure, never throws, reports every problem.
//
// Codes emitted here (types.ts has the full ProblemCode union, loader codes included):
//   invalid_openapi_version  `openapi` is not exactly "3.1.0"
//   missing_field            a required field is absent (info, info.title, x-gateway-key, servers,
//                            operationId, summary, parameter name/in/schema.type, ...)
//   invalid_field            a standard field has the wrong type (e.g. non-string description)
//   invalid_key              service key is not `^[a-z][a-z0-9_-]*$` (max 64)
//   invalid_server_url       servers[].url is not an absolute http(s) URL without variables/credentials
//   invalid_operation_id     operationId is not `^[A-Za-z][A-Za-z0-9_.-]*$` (it is a permission-key segment)
//   duplicate_operation_id   operationId used twice in the document
//   invalid_summary          summary empty, or a `{param}` names no parameter or body property
//   invalid_risk             risk is not read | write | delete
//   unknown_scope_param      scope_param names no parameter and no top-level body property
//   invalid_security_scheme  apiKey without in header|query / name / default_secret_name, or a bad
//                            path_param (not a placeholder name, not apiKey, not runtime http); oauth2
//                            without provider / authorizationCode URLs; unsupported scheme type
//   unknown_security_scheme  a security requirement names a scheme not in components
//   invalid_security         malformed security requirement, a scope the oauth2 scheme does not list, or
//                            a path placeholder only some of an operation's schemes fill
//   invalid_parameter        parameter malformed, `in` not path|query|header, no schema.type, optional path param,
//                            named like the placeholder a credential fills, or a header parameter that is not a
//                            fixed, public header (no string schema.const; Host, hop-by-hop, credential names)
//   duplicate_parameter      same parameter twice, or a parameter shadowing a body property
//   path_param_mismatch      `{x}` in the path without a path parameter, or the reverse; a path
//                            lacking the placeholder a path_param scheme it may use fills
//   invalid_request_body     requestBody without a JSON, form-urlencoded or multipart object schema,
//                            a bad `encoding` entry, or a required multipart file part
//   invalid_resolve          resolve is not exactly {get, pick} with valid strings
//   invalid_disclose         disclose is not a list of {label, filter, max_chars?}; filter > 2000 chars
//   invalid_redact           redact is not a list of dotted paths
//   invalid_response_type    response_type is not json | binary
//   invalid_disabled         disabled is not a boolean
//   invalid_runtime          runtime is not http | mcp | platform
//   invalid_mcp              runtime mcp without an x-gateway-mcp block with an http(s) url, or the reverse;
//                            an operation's x-gateway-tool outside runtime mcp or not a tool name; an
//                            x-gateway-tool_pin outside runtime mcp or not {hash, description, input_schema, annotations}
//   unknown_extension        an x-gateway-* key the spec does not define at that position (typos would
//                            silently widen permissions, e.g. a misspelt scope_param)
//   unresolved_ref           a $ref that is external, dangling or cyclic

import { EXTENSION_PREFIX, EXTENSIONS, ext, type ExtensionPosition } from './aliases.ts';
import {
  bodyPropertyNames,
  deref,
  effectiveParameters,
  isNonEmptyString,
  isObject,
  listOperations,
  own,
  pointer,
  templatePlaceholders,
  type JsonObject,
  type OperationRef,
} from './doc.ts';
import { readRequestBody } from './request-body.ts';
import { summaryParams } from './summary.ts';
import type { Problem, ProblemCode } from './types.ts';

export const SERVICE_KEY_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
export const OPERATION_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
/** MCP tool names (spec guidance: 1-128 of A-Z a-z 0-9 _ - . /). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_./-]{1,128}$/;
export const REDACT_PATH_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_*-]+)*$/;
/** Long jq programs exhaust jq-wasm faster (see server/registry/jq.ts); real filters are short. */
export const MAX_FILTER_LENGTH = 2000;
const PICK_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
export const PATH_PARAM_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** RFC 9110 token, bounded. */
const HEADER_NAME_PATTERN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const HEADER_VALUE_PATTERN = /^[\x20-\x7e]{1,256}$/;
/** Headers the gateway, Node or the connection set (framing, routing, hop-by-hop, content negotiation). */
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer',
  'expect', 'accept', 'accept-encoding', 'user-agent', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'via',
]);
/** Names that say a credential: a fixed header is public, so these go through a security scheme and the vault. */
const CREDENTIAL_HEADER_PATTERN = /auth|token|secret|password|passwd|cookie|session|signature|api-?key|credential/;
const JSON_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'array', 'object', 'null']);

type Add = (code: ProblemCode, at: ReadonlyArray<string | number>, message: string) => void;

interface Ctx {
  doc: JsonObject;
  add: Add;
  /** oauth2 scheme name → its declared scopes; other schemes map to undefined. */
  schemes: Map<string, Set<string> | undefined>;
  /** apiKey scheme name → the path placeholder its key fills (`x-gateway-path_param`). */
  pathSchemes: Map<string, string>;
  /** Lower-case names of the headers the service's schemes send a credential in. */
  credentialHeaders: Set<string>;
}

export function validateServiceDocument(input: unknown): Problem[] {
  const problems: Problem[] = [];
  const add: Add = (code, at, message) => problems.push({ code, path: pointer(...at), message });
  if (!isObject(input)) {
    add('invalid_document', [], 'a service document must be an object');
    return problems;
  }
  const ctx: Ctx = { doc: input, add, schemes: new Map(), pathSchemes: new Map(), credentialHeaders: new Set(['authorization']) };
  checkExtensions(input, 'document', [], add);
  checkRoot(ctx);
  checkSecuritySchemes(ctx);
  checkSecurityRequirements(ctx, own(input, 'security'), ['security']);
  checkOperations(ctx);
  return dedupe(problems);
}

/** Path-level parameters are checked once per operation; report each finding once. */
function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = `${p.code}\u0000${p.path}\u0000${p.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Disclose filters with their location, for the loader's jq compile check. */
export function collectDiscloseFilters(input: unknown): { path: string; filter: string }[] {
  if (!isObject(input)) return [];
  const out: { path: string; filter: string }[] = [];
  for (const ref of listOperations(input)) {
    if (!isObject(ref.operation)) continue;
    const list = own(ref.operation, ext('disclose'));
    if (!Array.isArray(list)) continue;
    list.forEach((entry, i) => {
      const filter = isObject(entry) ? own(entry, 'filter') : undefined;
      if (isNonEmptyString(filter) && filter.length <= MAX_FILTER_LENGTH) {
        out.push({ path: pointer('paths', ref.path, ref.method, ext('disclose'), i, 'filter'), filter });
      }
    });
  }
  return out;
}

function checkExtensions(obj: JsonObject, position: ExtensionPosition, at: string[], add: Add): void {
  const allowed = new Set<string>(EXTENSIONS[position].map(ext));
  for (const key of Object.keys(obj)) {
    if (key.startsWith(EXTENSION_PREFIX) && !allowed.has(key)) {
      add('unknown_extension', [...at, key], `'${key}' is not a gateway extension allowed here`);
    }
  }
}

function checkRoot({ doc, add }: Ctx): void {
  const version = own(doc, 'openapi');
  if (version === undefined) add('missing_field', ['openapi'], 'openapi is required');
  else if (version !== '3.1.0') add('invalid_openapi_version', ['openapi'], `openapi must be "3.1.0", got ${JSON.stringify(version)}`);

  const info = own(doc, 'info');
  if (!isObject(info)) {
    add('missing_field', ['info'], 'info is required');
  } else {
    checkExtensions(info, 'info', ['info'], add);
    const title = own(info, 'title');
    if (!isNonEmptyString(title)) add('missing_field', ['info', 'title'], 'info.title is required');
    const key = own(info, ext('key'));
    if (key === undefined) add('missing_field', ['info', ext('key')], 'info.key (service key) is required');
    else if (typeof key !== 'string' || !SERVICE_KEY_PATTERN.test(key)) {
      add('invalid_key', ['info', ext('key')], `service key must match ${SERVICE_KEY_PATTERN.source}`);
    }
    for (const field of ['description', ext('category')]) {
      const v = own(info, field);
      if (v !== undefined && typeof v !== 'string') add('invalid_field', ['info', field], `${field} must be a string`);
    }
  }

  const servers = own(doc, 'servers');
  if (!Array.isArray(servers) || servers.length === 0) {
    add('missing_field', ['servers'], 'servers must list at least one base URL');
  } else {
    servers.forEach((server, i) => {
      const url = isObject(server) ? own(server, 'url') : undefined;
      if (url === undefined) add('missing_field', ['servers', i, 'url'], 'servers[].url is required');
      else if (!isHttpUrl(url)) add('invalid_server_url', ['servers', i, 'url'], 'must be an absolute http(s) URL without variables or credentials');
    });
  }

  const runtime = own(doc, ext('runtime'));
  if (runtime !== undefined && runtime !== 'http' && runtime !== 'mcp' && runtime !== 'platform') {
    add('invalid_runtime', [ext('runtime')], 'runtime must be http, mcp or platform');
  }
  const mcp = own(doc, ext('mcp'));
  if (runtime === 'mcp') {
    if (!isObject(mcp)) add('invalid_mcp', [ext('mcp')], 'runtime mcp requires an mcp block with a url');
    else if (!isHttpUrl(own(mcp, 'url'))) add('invalid_mcp', [ext('mcp'), 'url'], 'mcp.url must be an absolute http(s) URL');
    if (isObject(mcp) && own(mcp, 'timeout_ms') !== undefined && !isMcpTimeout(own(mcp, 'timeout_ms'))) {
      add('invalid_mcp', [ext('mcp'), 'timeout_ms'], `mcp.timeout_ms must be an integer from ${MCP_TIMEOUT_MS.min} to ${MCP_TIMEOUT_MS.max}`);
    }
  } else if (mcp !== undefined) {
    add('invalid_mcp', [ext('mcp')], 'an mcp block requires runtime mcp');
  }

  const keyHeader = own(doc, ext('idempotency_key_header'));
  if (keyHeader !== undefined && (typeof keyHeader !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(keyHeader))) {
    add('invalid_field', [ext('idempotency_key_header')], 'idempotency_key_header must be an HTTP header name');
  }
  const paths = own(doc, 'paths');
  if (paths !== undefined && !isObject(paths)) add('invalid_field', ['paths'], 'paths must be an object');
  if (isObject(paths)) {
    for (const [path, item] of Object.entries(paths)) {
      const resolved = deref(doc, item);
      if (!path.startsWith('/')) add('invalid_field', ['paths', path], 'path must start with /');
      if (resolved === undefined) add('unresolved_ref', ['paths', path], 'path item $ref does not resolve locally');
      else if (isObject(resolved)) checkExtensions(resolved, 'pathItem', ['paths', path], add);
    }
  }
}

export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || /[{}\s]/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

function checkSecuritySchemes(ctx: Ctx): void {
  const { doc, add } = ctx;
  const components = own(doc, 'components');
  const schemes = isObject(components) ? own(components, 'securitySchemes') : undefined;
  if (!isObject(schemes)) return;
  for (const [name, raw] of Object.entries(schemes)) {
    const at = ['components', 'securitySchemes', name];
    const scheme = deref(doc, raw);
    if (!isObject(scheme)) {
      add(scheme === undefined ? 'unresolved_ref' : 'invalid_security_scheme', at, 'security scheme must be an object');
      ctx.schemes.set(name, undefined);
      continue;
    }
    checkExtensions(scheme, 'securityScheme', at, add);
    const bad = (msg: string, field?: string): void => add('invalid_security_scheme', field ? [...at, field] : at, msg);
    const type = own(scheme, 'type');
    const prefix = own(scheme, ext('prefix'));
    if (prefix !== undefined && typeof prefix !== 'string') bad('prefix must be a string', ext('prefix'));
    if (type !== 'apiKey' && own(scheme, ext('path_param')) !== undefined) bad('path_param is for apiKey schemes only', ext('path_param'));
    const needsSecret = (): void => {
      if (!isNonEmptyString(own(scheme, ext('default_secret_name')))) bad('default_secret_name is required', ext('default_secret_name'));
    };
    if (type === 'apiKey') {
      const where = own(scheme, 'in');
      if (where !== 'header' && where !== 'query') bad('apiKey in must be header or query', 'in');
      if (!isNonEmptyString(own(scheme, 'name'))) bad('apiKey name is required', 'name');
      else if (where === 'header') ctx.credentialHeaders.add(String(own(scheme, 'name')).toLowerCase());
      needsSecret();
      const pathParam = own(scheme, ext('path_param'));
      if (pathParam !== undefined) {
        if (typeof pathParam !== 'string' || !PATH_PARAM_PATTERN.test(pathParam)) bad(`path_param must match ${PATH_PARAM_PATTERN.source}`, ext('path_param'));
        else if ((own(doc, ext('runtime')) ?? 'http') !== 'http') bad('path_param fills a placeholder of an HTTP action path; it requires runtime http', ext('path_param'));
        else ctx.pathSchemes.set(name, pathParam);
      }
      ctx.schemes.set(name, undefined);
    } else if (type === 'http') {
      const httpScheme = own(scheme, 'scheme'); // case-insensitive per RFC 7235
      if (typeof httpScheme !== 'string' || httpScheme.toLowerCase() !== 'bearer') bad('only http scheme bearer is supported', 'scheme');
      needsSecret();
      ctx.schemes.set(name, undefined);
    } else if (type === 'oauth2') {
      if (!isNonEmptyString(own(scheme, ext('provider')))) bad('oauth2 provider is required', ext('provider'));
      const flows = own(scheme, 'flows');
      const code = isObject(flows) ? own(flows, 'authorizationCode') : undefined;
      const flowAt = ['flows', 'authorizationCode'];
      if (!isObject(code)) {
        bad('oauth2 requires flows.authorizationCode', 'flows');
        ctx.schemes.set(name, new Set());
        continue;
      }
      for (const field of ['authorizationUrl', 'tokenUrl']) {
        if (!isHttpUrl(own(code, field))) add('invalid_security_scheme', [...at, ...flowAt, field], `${field} must be an absolute http(s) URL`);
      }
      const scopes = own(code, 'scopes');
      if (scopes !== undefined && !isObject(scopes)) add('invalid_security_scheme', [...at, ...flowAt, 'scopes'], 'scopes must be a map');
      ctx.schemes.set(name, new Set(isObject(scopes) ? Object.keys(scopes) : []));
    } else {
      bad(`unsupported security scheme type ${JSON.stringify(type)} (apiKey, oauth2 or http bearer)`, 'type');
      ctx.schemes.set(name, undefined);
    }
  }
}

function checkSecurityRequirements(ctx: Ctx, security: unknown, at: Array<string | number>): void {
  if (security === undefined) return;
  if (!Array.isArray(security)) {
    ctx.add('invalid_security', at, 'security must be a list of requirement objects');
    return;
  }
  security.forEach((req, i) => {
    if (!isObject(req)) {
      ctx.add('invalid_security', [...at, i], 'security requirement must be an object');
      return;
    }
    for (const [scheme, scopes] of Object.entries(req)) {
      const where = [...at, i, scheme];
      if (!ctx.schemes.has(scheme)) {
        ctx.add('unknown_security_scheme', where, `no security scheme named '${scheme}'`);
        continue;
      }
      if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) {
        ctx.add('invalid_security', where, 'scopes must be a list of strings');
        continue;
      }
      const declared = ctx.schemes.get(scheme);
      for (const scope of scopes) {
        if (declared !== undefined && !declared.has(scope)) {
          ctx.add('invalid_security', where, `scope '${scope}' is not declared by the oauth2 scheme`);
        }
      }
    }
  });
}

function checkOperations(ctx: Ctx): void {
  const seen = new Map<string, string>();
  for (const ref of listOperations(ctx.doc)) {
    const at = ['paths', ref.path, ref.method];
    if (!isObject(ref.operation)) {
      ctx.add('invalid_field', at, 'operation must be an object');
      continue;
    }
    const opId = own(ref.operation, 'operationId');
    if (opId === undefined) ctx.add('missing_field', [...at, 'operationId'], 'operationId is required');
    else if (typeof opId !== 'string' || !OPERATION_ID_PATTERN.test(opId)) {
      ctx.add('invalid_operation_id', [...at, 'operationId'], `operationId must match ${OPERATION_ID_PATTERN.source}`);
    } else if (seen.has(opId)) {
      ctx.add('duplicate_operation_id', [...at, 'operationId'], `operationId '${opId}' is already used at ${seen.get(opId)}`);
    } else {
      seen.set(opId, pointer(...at));
    }
    checkOperation(ctx, ref, ref.operation, at);
  }
}

function checkOperation(ctx: Ctx, ref: OperationRef, op: JsonObject, at: string[]): void {
  const { add } = ctx;
  checkExtensions(op, 'operation', at, add);
  const secretPlaceholders = checkSecretPlaceholders(ctx, ref, op, at);
  const params = checkParameters(ctx, ref, secretPlaceholders);
  const body = checkRequestBody(ctx, op, at);
  const bodyProps = bodyPropertyNames(body);
  for (const name of bodyProps) {
    if (params.has(name)) add('duplicate_parameter', at, `parameter '${name}' is also a request body property; call arguments would be ambiguous`);
  }
  const names = new Set([...params, ...bodyProps]);

  const summary = own(op, 'summary');
  if (summary === undefined) add('missing_field', [...at, 'summary'], 'summary is required');
  else if (!isNonEmptyString(summary)) add('invalid_summary', [...at, 'summary'], 'summary must be a non-empty string');
  else {
    for (const name of summaryParams(summary)) {
      if (!names.has(name)) add('invalid_summary', [...at, 'summary'], `summary placeholder {${name}} names no parameter or body property`);
    }
  }
  const description = own(op, 'description');
  if (description !== undefined && typeof description !== 'string') add('invalid_field', [...at, 'description'], 'description must be a string');

  const risk = own(op, ext('risk'));
  if (risk !== undefined && risk !== 'read' && risk !== 'write' && risk !== 'delete') {
    add('invalid_risk', [...at, ext('risk')], 'risk must be read, write or delete');
  }
  const scopeParam = own(op, ext('scope_param'));
  if (scopeParam !== undefined && (typeof scopeParam !== 'string' || !names.has(scopeParam))) {
    add('unknown_scope_param', [...at, ext('scope_param')], `scope_param ${JSON.stringify(scopeParam)} names no parameter or top-level body property`);
  }
  const responseType = own(op, ext('response_type'));
  if (responseType !== undefined && responseType !== 'json' && responseType !== 'binary') {
    add('invalid_response_type', [...at, ext('response_type')], 'response_type must be json or binary');
  }
  const disabled = own(op, ext('disabled'));
  if (disabled !== undefined && typeof disabled !== 'boolean') add('invalid_disabled', [...at, ext('disabled')], 'disabled must be a boolean');
  const tool = own(op, ext('tool'));
  if (tool !== undefined) {
    if (own(ctx.doc, ext('runtime')) !== 'mcp') add('invalid_mcp', [...at, ext('tool')], 'tool names an MCP tool and requires runtime mcp');
    else if (typeof tool !== 'string' || !TOOL_NAME_PATTERN.test(tool)) add('invalid_mcp', [...at, ext('tool')], `tool must match ${TOOL_NAME_PATTERN.source}`);
  }
  const pin = own(op, ext('tool_pin'));
  if (pin !== undefined) {
    if (own(ctx.doc, ext('runtime')) !== 'mcp') add('invalid_mcp', [...at, ext('tool_pin')], 'tool_pin pins an MCP tool and requires runtime mcp');
    else if (!isToolPin(pin)) add('invalid_mcp', [...at, ext('tool_pin')], 'tool_pin must be {hash, description, input_schema, annotations}');
  }

  checkDisclose(add, own(op, ext('disclose')), [...at, ext('disclose')]);
  checkRedact(add, own(op, ext('redact')), [...at, ext('redact')]);
  checkSecurityRequirements(ctx, own(op, 'security'), [...at, 'security']);
  checkResolves(ctx, ref, names);
}

/**
 * A scheme with `path_param` puts its key into the action's path. Every scheme the operation may
 * be called with must then fill that placeholder (another credential would leave it empty), the
 * path must have it, and no parameter may share its name (the caller would set the secret's slot).
 * Returns the placeholders the credential fills.
 */
function checkSecretPlaceholders(ctx: Ctx, ref: OperationRef, op: JsonObject, at: string[]): Set<string> {
  const filled = new Set<string>();
  if (ctx.pathSchemes.size === 0) return filled;
  const security = Object.hasOwn(op, 'security') ? own(op, 'security') : own(ctx.doc, 'security');
  // No security requirement at all means any of the service's schemes may be used.
  const schemes = Array.isArray(security) ? security.flatMap((req) => (isObject(req) ? Object.keys(req) : [])) : [...ctx.schemes.keys()];
  const placeholders = templatePlaceholders(ref.path);
  for (const scheme of new Set(schemes)) {
    const slot = ctx.pathSchemes.get(scheme);
    if (slot === undefined) continue;
    if (!placeholders.includes(slot)) ctx.add('path_param_mismatch', at, `security scheme '${scheme}' puts its key into {${slot}}, which this path lacks`);
    else filled.add(slot);
  }
  for (const slot of filled) {
    const others = [...new Set(schemes)].filter((scheme) => ctx.pathSchemes.get(scheme) !== slot);
    if (others.length > 0) ctx.add('invalid_security', at, `{${slot}} is filled by a credential only some of this operation's schemes supply (not ${others.join(', ')})`);
  }
  for (const { value } of effectiveParameters(ctx.doc, ref)) {
    const name = isObject(value) ? own(value, 'name') : undefined;
    if (typeof name === 'string' && filled.has(name)) ctx.add('invalid_parameter', at, `parameter '${name}' would let a caller set {${name}}, which the credential fills`);
  }
  return filled;
}

/** Validates each effective parameter; returns the names of the well-formed ones. */
function checkParameters(ctx: Ctx, ref: OperationRef, secretPlaceholders: ReadonlySet<string>): Set<string> {
  const { add } = ctx;
  const names = new Set<string>();
  const pathParams = new Set<string>();
  const seen = new Set<string>();
  const headers = new Set<string>();
  for (const { at, value } of effectiveParameters(ctx.doc, ref)) {
    if (value === undefined) {
      add('unresolved_ref', at, 'parameter $ref does not resolve locally');
      continue;
    }
    if (!isObject(value)) {
      add('invalid_parameter', at, 'parameter must be an object');
      continue;
    }
    checkExtensions(value, 'parameter', at, add);
    const name = own(value, 'name');
    const where = own(value, 'in');
    if (!isNonEmptyString(name)) {
      add('missing_field', [...at, 'name'], 'parameter name is required');
      continue;
    }
    if (where === 'header') {
      checkFixedHeader(ctx, value, name, at, headers);
      continue;
    }
    if (where !== 'path' && where !== 'query') {
      add('invalid_parameter', [...at, 'in'], `parameter '${name}': in must be path, query or header`);
      continue;
    }
    if (seen.has(name)) add('duplicate_parameter', at, `parameter '${name}' is declared twice`);
    seen.add(name);
    const required = own(value, 'required');
    if (required !== undefined && typeof required !== 'boolean') add('invalid_parameter', [...at, 'required'], 'required must be a boolean');
    if (where === 'path' && required === false) add('invalid_parameter', [...at, 'required'], `path parameter '${name}' must be required`);
    const description = own(value, 'description');
    if (description !== undefined && typeof description !== 'string') add('invalid_parameter', [...at, 'description'], 'description must be a string');
    const schema = deref(ctx.doc, own(value, 'schema'));
    if (!isObject(schema)) {
      add('missing_field', [...at, 'schema'], `parameter '${name}' needs schema.type`);
    } else {
      const type = own(schema, 'type');
      const types = Array.isArray(type) ? type : [type];
      if (types.length === 0 || !types.every((t) => typeof t === 'string' && JSON_TYPES.has(t))) {
        add(type === undefined ? 'missing_field' : 'invalid_parameter', [...at, 'schema', 'type'], `parameter '${name}' needs a JSON schema.type`);
      }
      const enumValues = own(schema, 'enum');
      if (enumValues !== undefined && (!Array.isArray(enumValues) || enumValues.length === 0)) {
        add('invalid_parameter', [...at, 'schema', 'enum'], 'enum must be a non-empty list');
      }
    }
    names.add(name);
    if (where === 'path') pathParams.add(name);
  }

  const placeholders = templatePlaceholders(ref.path);
  const at = ['paths', ref.path, ref.method];
  for (const p of placeholders) {
    if (!pathParams.has(p) && !secretPlaceholders.has(p)) add('path_param_mismatch', at, `path placeholder {${p}} has no path parameter`);
  }
  if (new Set(placeholders).size !== placeholders.length) add('path_param_mismatch', at, 'a path placeholder appears twice');
  for (const p of pathParams) {
    if (!placeholders.includes(p)) add('path_param_mismatch', at, `path parameter '${p}' does not appear in the path`);
  }
  return names;
}

/**
 * A header parameter is a fixed header the executor sends with every request of the action
 * (API versions: `LinkedIn-Version`, `Notion-Version`). Its value is a string `const` in the
 * document, public like the rest of it: agents never set headers, and a header carrying a
 * credential, framing or routing (Host, hop-by-hop) cannot be declared.
 */
function checkFixedHeader(ctx: Ctx, p: JsonObject, name: string, at: Array<string | number>, seen: Set<string>): void {
  const bad = (message: string, field?: string): void => ctx.add('invalid_parameter', field ? [...at, field] : at, `header '${name}': ${message}`);
  const lower = name.toLowerCase();
  if ((own(ctx.doc, ext('runtime')) ?? 'http') !== 'http') return bad('fixed headers are sent by HTTP actions only (runtime http)', 'in');
  if (!HEADER_NAME_PATTERN.test(name)) return bad('is not an HTTP header name', 'name');
  if (seen.has(lower)) return ctx.add('duplicate_parameter', at, `header '${name}' is declared twice`);
  seen.add(lower);
  if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) return bad('is set by the gateway or the connection and cannot be fixed by a template', 'name');
  if (ctx.credentialHeaders.has(lower) || CREDENTIAL_HEADER_PATTERN.test(lower)) {
    return bad('would carry a credential: declare a security scheme, whose value the vault holds', 'name');
  }
  const keyHeader = own(ctx.doc, ext('idempotency_key_header'));
  if (typeof keyHeader === 'string' && keyHeader.toLowerCase() === lower) return bad('is the idempotency key header, which the gateway fills', 'name');
  const schema = deref(ctx.doc, own(p, 'schema'));
  const value = isObject(schema) ? own(schema, 'const') : undefined;
  if (typeof value !== 'string' || !HEADER_VALUE_PATTERN.test(value)) {
    bad('needs schema.const: the string the gateway sends (printable ASCII, at most 256 characters); agents never set headers', 'schema');
  }
}

function checkRequestBody(ctx: Ctx, op: JsonObject, at: string[]): JsonObject | undefined {
  const raw = own(op, 'requestBody');
  if (raw === undefined) return undefined;
  const body = deref(ctx.doc, raw);
  if (body === undefined) {
    ctx.add('unresolved_ref', [...at, 'requestBody'], 'requestBody $ref does not resolve locally');
    return undefined;
  }
  const reading = readRequestBody(ctx.doc, op);
  if (reading === undefined) return undefined;
  if (!reading.ok) {
    for (const p of reading.problems) ctx.add('invalid_request_body', [...at, 'requestBody', ...p.at], p.message);
    return undefined;
  }
  return reading.media.schema;
}

function checkDisclose(add: Add, value: unknown, at: Array<string | number>): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    add('invalid_disclose', at, 'disclose must be a list of {label, filter, max_chars?}');
    return;
  }
  value.forEach((entry, i) => {
    const where = [...at, i];
    if (!isObject(entry)) {
      add('invalid_disclose', where, 'disclose entry must be an object');
      return;
    }
    if (!isNonEmptyString(own(entry, 'label'))) add('invalid_disclose', [...where, 'label'], 'label must be a non-empty string');
    const filter = own(entry, 'filter');
    if (!isNonEmptyString(filter)) add('invalid_disclose', [...where, 'filter'], 'filter must be a non-empty jq expression');
    else if (filter.length > MAX_FILTER_LENGTH) add('invalid_disclose', [...where, 'filter'], `filter is longer than ${MAX_FILTER_LENGTH} characters`);
    const max = own(entry, 'max_chars');
    if (max !== undefined && !(Number.isInteger(max) && (max as number) > 0)) {
      add('invalid_disclose', [...where, 'max_chars'], 'max_chars must be a positive integer');
    }
    for (const key of Object.keys(entry)) {
      if (key !== 'label' && key !== 'filter' && key !== 'max_chars') add('invalid_disclose', [...where, key], `unknown disclose field '${key}'`);
    }
  });
}

function checkRedact(add: Add, value: unknown, at: Array<string | number>): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    add('invalid_redact', at, 'redact must be a list of dotted paths');
    return;
  }
  value.forEach((path, i) => {
    if (typeof path !== 'string' || !REDACT_PATH_PATTERN.test(path)) {
      add('invalid_redact', [...at, i], `redact entry must match ${REDACT_PATH_PATTERN.source}`);
    }
  });
}

function checkResolves(ctx: Ctx, ref: OperationRef, names: Set<string>): void {
  for (const { at, value } of effectiveParameters(ctx.doc, ref)) {
    if (!isObject(value)) continue;
    const resolve = own(value, ext('resolve'));
    if (resolve === undefined) continue;
    const where = [...at, ext('resolve')];
    if (!isObject(resolve)) {
      ctx.add('invalid_resolve', where, 'resolve must be an object {get, pick}');
      continue;
    }
    const extra = Object.keys(resolve).filter((k) => k !== 'get' && k !== 'pick');
    if (extra.length > 0) ctx.add('invalid_resolve', where, `resolve allows only get and pick (found ${extra.join(', ')})`);
    const get = own(resolve, 'get');
    const pick = own(resolve, 'pick');
    if (typeof get !== 'string' || !get.startsWith('/')) {
      ctx.add('invalid_resolve', [...where, 'get'], 'get must be a path starting with /');
    } else {
      for (const p of templatePlaceholders(get)) {
        if (!names.has(p)) ctx.add('invalid_resolve', [...where, 'get'], `placeholder {${p}} names no parameter of the action`);
      }
    }
    if (typeof pick !== 'string' || !PICK_PATTERN.test(pick)) ctx.add('invalid_resolve', [...where, 'pick'], 'pick must be a dot-path');
  }
}

function isToolPin(v: unknown): boolean {
  if (!isObject(v)) return false;
  const description = own(v, 'description');
  const annotations = own(v, 'annotations');
  return (
    typeof own(v, 'hash') === 'string' &&
    (description === null || typeof description === 'string') &&
    isObject(own(v, 'input_schema')) &&
    (annotations === null || isObject(annotations))
  );
}

/** The bounds of an MCP service's own upstream timeout (`x-gateway-mcp.timeout_ms`), as UPSTREAM_TIMEOUT_MS's. */
export const MCP_TIMEOUT_MS = { min: 100, max: 600_000 } as const;

function isMcpTimeout(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= MCP_TIMEOUT_MS.min && v <= MCP_TIMEOUT_MS.max;
}
