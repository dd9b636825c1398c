// Compiled, in-memory form of a service definition: what the executor, permission layer,
// search and REST listings consume. Built once at load; never the raw OpenAPI document.

import type { JsonObject } from './doc.ts';
import type { FormBody } from './request-body.ts';

export type Risk = 'read' | 'write' | 'delete';
export type Runtime = 'http' | 'mcp' | 'platform';
export type ResponseType = 'json' | 'binary';

export interface ApiKeyAuth {
  type: 'apiKey';
  /** Security scheme name in `components.securitySchemes`. */
  name: string;
  /** `path`: the key fills a placeholder of the action's path (`x-gateway-path_param`), e.g. Telegram's `/bot{token}/…`. */
  in: 'header' | 'query' | 'path';
  /** Header or query-parameter name the key is sent as; for `path`, the placeholder's name. */
  paramName: string;
  /** Prepended to the secret value, e.g. `Bearer `. */
  prefix?: string;
  /** Vault secret holding the key. */
  defaultSecretName: string;
}

export interface OAuth2Auth {
  type: 'oauth2';
  name: string;
  provider: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** Superset of scopes the service may request; the caller picks a subset at connect time. */
  scopes: string[];
}

/** `type: http, scheme: bearer`: the vault secret is sent as `Authorization: Bearer <secret>`. */
export interface HttpBearerAuth {
  type: 'http';
  name: string;
  scheme: 'bearer';
  defaultSecretName: string;
}

export type AuthMethod = ApiKeyAuth | OAuth2Auth | HttpBearerAuth;

export interface ParamSchema {
  /** OpenAPI 3.1 allows a list of types, e.g. `[string, "null"]`. */
  type: string | string[];
  enum?: unknown[];
  default?: unknown;
  /** The full JSON schema, for argument validation. */
  raw: JsonObject;
}

export interface ParamResolve {
  /** GET path with `{param}` placeholders, called with the service's auth. */
  get: string;
  /** Dot-path into the JSON response. */
  pick: string;
}

export interface CompiledParam {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: ParamSchema;
  resolve?: ParamResolve;
}

export interface DiscloseEntry {
  label: string;
  /** jq over the `{method, url, params, body}` projection of the resolved request. */
  filter: string;
  maxChars?: number;
}

export interface CompiledAction {
  /** The operationId: what callers invoke. */
  key: string;
  method: string; // upper case: GET, POST, ...
  pathTemplate: string;
  /** Summary template with `{param}` and `[optional segments]`; see summary.ts. */
  summary: string;
  description?: string;
  parameters: CompiledParam[];
  /**
   * The request body's object schema (JSON, form-urlencoded or multipart; see request-body.ts)
   * with a top-level `$ref` resolved: it validates the body object whatever the wire format.
   */
  bodySchema?: JsonObject;
  /** A form body: encoded by core/execution/form-body.ts as it leaves; absent for JSON. */
  bodyForm?: FormBody;
  bodyRequired: boolean;
  risk: Risk;
  /** Parameter or top-level body property supplying the permission key's arg; absent means `*`. */
  scopeParam?: string;
  /** Minimum OAuth scopes checked against the connection's granted scopes at call time. */
  requiredScopes: string[];
  /** Security scheme names the effective security requirement names; undefined = any method. */
  securitySchemes?: string[];
  disclose: DiscloseEntry[];
  /** Dotted paths into the resolved request replaced by `[REDACTED]` when persisted. */
  redact: string[];
  responseType: ResponseType;
  /**
   * Headers the action always sends, from OpenAPI header parameters with a `const` value
   * (LinkedIn's `LinkedIn-Version: 202401`): not caller parameters; absent when there are none.
   */
  fixedHeaders?: Readonly<Record<string, string>>;
  disabled: boolean;
  /** Runtime `mcp`: the MCP tool this action calls (`x-gateway-tool`); absent means the action key. */
  tool?: string;
  /** Runtime `mcp`: the tool as published (`x-gateway-tool_pin`); a call is refused when the server's tool differs. */
  toolPin?: ToolPinRef;
}

/** A published tool's description, input schema and annotations, and their hash (core/mcp-servers/tools.ts). */
export interface ToolPinRef {
  hash: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
}

export interface McpConfig {
  url: string;
  /** `timeout_ms`: this server's upstream timeout; absent, the gateway's (UPSTREAM_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface CompiledService {
  key: string;
  title: string;
  description?: string;
  category?: string;
  /** Lower-case hostnames of `servers[].url`; outbound calls are bound to them. */
  hosts: string[];
  /** `servers[].url` without a trailing slash, in document order. */
  baseUrls: string[];
  authMethods: AuthMethod[];
  runtime: Runtime;
  mcp?: McpConfig;
  /**
   * `x-gateway-idempotency_key_header`: the upstream de-duplicates requests carrying this header,
   * so the gateway sends it (with the execution id) and may retry a request that may have left.
   */
  idempotencyKeyHeader?: string;
  /** A Map, so action names such as `constructor` never hit Object.prototype. */
  actions: ReadonlyMap<string, CompiledAction>;
  /** Where the definition came from: a file path, or e.g. `org:<id>` for custom templates. */
  source: string;
}

/**
 * Stable problem codes reported for a service document. Parse/structure/jq/duplicate-key codes
 * come from the loader; the rest from validate.ts and aliases.ts (listed there).
 */
export type ProblemCode =
  | 'unreadable_file' // service file or folder could not be read (loader)
  | 'parse_error' // YAML/JSON syntax error (loader)
  | 'invalid_document' // root is not an object (loader)
  | 'invalid_openapi' // structural OpenAPI 3.1 schema violation (swagger-parser, loader)
  | 'invalid_jq_filter' // disclose filter does not compile (loader)
  | 'duplicate_service_key' // another loaded file already claims info.key (loader)
  | 'internal_error' // unexpected exception while loading; never thrown to callers
  | 'ambiguous_alias'
  | 'unknown_extension'
  | 'invalid_openapi_version'
  | 'missing_field'
  | 'invalid_field'
  | 'invalid_key'
  | 'invalid_server_url'
  | 'invalid_operation_id'
  | 'duplicate_operation_id'
  | 'invalid_summary'
  | 'invalid_risk'
  | 'unknown_scope_param'
  | 'invalid_security_scheme'
  | 'unknown_security_scheme'
  | 'invalid_security'
  | 'invalid_parameter'
  | 'duplicate_parameter'
  | 'path_param_mismatch'
  | 'invalid_request_body'
  | 'invalid_resolve'
  | 'invalid_disclose'
  | 'invalid_redact'
  | 'invalid_response_type'
  | 'invalid_disabled'
  | 'invalid_runtime'
  | 'invalid_mcp'
  | 'unresolved_ref';

export interface Problem {
  code: ProblemCode;
  /** JSON Pointer into the document (`''` for the root). */
  path: string;
  message: string;
}
