// Response bodies of the MCP server routes.
import { z } from 'zod';
import { timestamp, uuid } from '../http/openapi/common.ts';

const risk = z.enum(['read', 'write', 'delete']);
const field = z.strictObject({ pinned: z.unknown(), current: z.unknown() });

export const McpServerTool = z
  .strictObject({
    name: z.string().describe('The tool name on the server.'),
    action: z.string().describe('The action key (the permission key’s second segment).'),
    summary: z.string(),
    status: z.enum(['active', 'new', 'removed']).describe('`new`: arrived on a refresh, disabled until enabled or accepted; `removed`: gone from the server, disabled.'),
    enabled: z.boolean(),
    risk: risk.describe('The risk calls are judged by: the admin’s override, else from the annotations.'),
    annotation_risk: risk.describe('From the published annotations: readOnlyHint → read; destructiveHint (default true) → delete; else write.'),
    scope_param: z.string().optional(),
    override: z.strictObject({ risk: risk.optional(), scope_param: z.string().optional(), enabled: z.boolean().optional() }),
    changed: z.boolean().describe('The server describes the tool differently from what was published: calls answer `tool_changed` until accepted.'),
    changes: z
      .strictObject({ description: field.optional(), input_schema: field.optional(), annotations: field.optional() })
      .optional()
      .describe('What changed: each field as published and as the server lists it now.'),
  })
  .meta({ id: 'McpServerTool' });

export const McpServer = z
  .strictObject({
    id: uuid,
    name: z.string(),
    service: z.string().describe('The service name callers use.'),
    url: z.string(),
    scope: z.enum(['org', 'user']),
    auth: z.union([
      z.strictObject({ type: z.literal('none') }),
      z.strictObject({ type: z.literal('bearer'), secret_name: z.string() }),
      z.strictObject({ type: z.literal('header'), header_name: z.string(), secret_name: z.string() }),
      z
        .strictObject({ type: z.literal('oauth'), provider: z.string(), authorization_url: z.string(), token_url: z.string(), scopes: z.array(z.string()) })
        .describe('OAuth per the MCP Authorization spec: each person’s tokens are their connection to `provider`.'),
    ]),
    timeout_ms: z.int().nullable().describe('This server’s upstream timeout in ms; null: the gateway’s UPSTREAM_TIMEOUT_MS.'),
    template_id: uuid,
    refreshed_at: timestamp,
    created_at: timestamp,
    tools: z.array(McpServerTool),
  })
  .meta({ id: 'McpServer' });

export const McpServerList = z.strictObject({ mcp_servers: z.array(McpServer) }).meta({ id: 'McpServerList' });
