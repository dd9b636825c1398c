// The service definition (an OpenAPI 3.1 document of runtime `mcp`) generated from a connected
// MCP server and its tools, so the registry, search, permissions, approvals and the executor
// treat its tools like any template's actions. Pure.
import { pinHash, type Risk, type ToolPin } from './tools.ts';

export type UpstreamAuth =
  | { type: 'none' }
  | { type: 'bearer'; secret_name: string }
  | { type: 'header'; header_name: string; secret_name: string }
  /** OAuth as the MCP Authorization spec describes: tokens are each person's connection to `provider`. */
  | { type: 'oauth'; provider: string; authorization_url: string; token_url: string; scopes: string[] };

/** An admin's choices for one tool; each wins over what the server's annotations say. */
export interface ToolOverride {
  risk?: Risk;
  scope_param?: string | null;
  enabled?: boolean;
}

/** `active`: published; `new`: arrived on a refresh, off until enabled; `removed`: gone from the server. */
export type ToolStatus = 'active' | 'new' | 'removed';

export interface ToolRecord {
  name: string;
  key: string;
  summary: string;
  /** What was published: an action always carries this, never the unreviewed current text. */
  pinned: ToolPin;
  annotationRisk: Risk;
  status: ToolStatus;
  override: ToolOverride;
}

export interface ServerRecord {
  name: string;
  url: string;
  auth: UpstreamAuth;
  /** Null: the gateway's UPSTREAM_TIMEOUT_MS. */
  timeoutMs: number | null;
}

export const effectiveRisk = (t: ToolRecord): Risk => t.override.risk ?? t.annotationRisk;
export const toolEnabled = (t: ToolRecord): boolean => t.status !== 'removed' && (t.override.enabled ?? t.status === 'active');

const SCHEME = 'upstream';

function securitySchemes(auth: UpstreamAuth): Record<string, unknown> | undefined {
  switch (auth.type) {
    case 'none':
      return undefined;
    case 'bearer':
      return { [SCHEME]: { type: 'http', scheme: 'bearer', 'x-gateway-default_secret_name': auth.secret_name } };
    case 'header':
      return { [SCHEME]: { type: 'apiKey', in: 'header', name: auth.header_name, 'x-gateway-default_secret_name': auth.secret_name } };
    case 'oauth':
      return {
        [SCHEME]: {
          type: 'oauth2',
          'x-gateway-provider': auth.provider,
          flows: { authorizationCode: { authorizationUrl: auth.authorization_url, tokenUrl: auth.token_url, scopes: Object.fromEntries(auth.scopes.map((s) => [s, s])) } },
        },
      };
  }
}

export function serviceDocument(server: ServerRecord, tools: readonly ToolRecord[]): Record<string, unknown> {
  const schemes = securitySchemes(server.auth);
  const paths: Record<string, unknown> = {};
  for (const t of tools) {
    const scopeParam = t.override.scope_param ?? undefined;
    paths[`/tools/${t.key}`] = {
      post: {
        operationId: t.key,
        summary: t.summary,
        ...(t.pinned.description ? { description: t.pinned.description } : {}),
        'x-gateway-tool': t.name,
        'x-gateway-risk': effectiveRisk(t),
        ...(scopeParam ? { 'x-gateway-scope_param': scopeParam } : {}),
        'x-gateway-disabled': !toolEnabled(t),
        'x-gateway-tool_pin': { hash: pinHash(t.pinned), ...t.pinned },
        requestBody: { required: true, content: { 'application/json': { schema: t.pinned.input_schema } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: `${server.name} (MCP server)`, 'x-gateway-key': server.name, version: '1', description: `Tools of the MCP server at ${server.url}` },
    'x-gateway-runtime': 'mcp',
    'x-gateway-mcp': { url: server.url, ...(server.timeoutMs !== null ? { timeout_ms: server.timeoutMs } : {}) },
    servers: [{ url: new URL(server.url).origin }],
    ...(schemes ? { components: { securitySchemes: schemes }, security: [{ [SCHEME]: [] }] } : {}),
    paths,
  };
}
