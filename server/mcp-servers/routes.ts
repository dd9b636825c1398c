// REST over connected MCP servers: connect, list, get, refresh, delete, and per-tool accept/override.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { MCP_TIMEOUT_MS } from '../../core/registry/validate.ts';
import { McpServer, McpServerList } from './responses.ts';
import type { McpServerService } from './service.ts';

const secretName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/);
const auth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('bearer'), secret_name: secretName }),
  z.strictObject({ type: z.literal('header'), header_name: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'an HTTP header name'), secret_name: secretName }),
  // OAuth per the MCP Authorization spec: endpoints are discovered; a client is registered by DCR unless one is given.
  z.strictObject({ type: z.literal('oauth'), client_id: z.string().min(1).max(512).optional(), client_secret: z.string().min(1).max(4096).optional() }),
]);
// The bounds of UPSTREAM_TIMEOUT_MS.
const timeoutMs = z.int().min(MCP_TIMEOUT_MS.min).max(MCP_TIMEOUT_MS.max).describe('Upstream timeout of this server’s calls, in ms (default UPSTREAM_TIMEOUT_MS).');
const connectBody = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, _ and -, starting with a letter'),
  url: z
    .url({ protocol: /^https?$/, error: 'an absolute http(s) URL' })
    .max(2000),
  auth: auth.optional(),
  scope: z.enum(['org', 'user']).default('org'),
  timeout_ms: timeoutMs.optional(),
});
const serverBody = z.strictObject({ timeout_ms: timeoutMs.nullable().optional() });
const toolBody = z.strictObject({
  risk: z.enum(['read', 'write', 'delete']).nullable().optional(),
  scope_param: z.string().min(1).max(128).nullable().optional(),
  enabled: z.boolean().nullable().optional(),
});
const idParams = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const toolParams = z.object({ id: z.uuid({ error: 'must be a UUID' }), tool: z.string().min(1).max(128) });

export function mcpServerRoutes(servers: McpServerService): Router {
  const r = apiRouter({ tags: ['MCP servers'] });
  r.route({
    method: 'get',
    path: '/mcp-servers',
    operationId: 'listMcpServers',
    summary: 'Connected upstream MCP servers: the org’s and the caller’s',
    responses: { 200: McpServerList },
  }, async (req, res) => {
    res.json({ mcp_servers: await servers.list(principalOf(req)) });
  });
  r.route({
    method: 'post',
    path: '/mcp-servers',
    operationId: 'connectMcpServer',
    summary: 'Connect a Streamable-HTTP MCP server: its tools become the actions of a service of that name',
    body: connectBody,
    responses: { 201: McpServer },
    errors: ['forbidden', 'conflict', 'invalid_service_definition', 'credential_missing', 'secret_not_allowed_for_host', 'needs_authentication', 'reauth_required', 'upstream_error', 'upstream_unreachable', 'upstream_timeout'],
  }, async (req, res, { body }) => {
    res.status(201).json(await servers.connect(principalOf(req), body));
  });
  r.route({
    method: 'get',
    path: '/mcp-servers/{id}',
    operationId: 'getMcpServer',
    summary: 'One connected MCP server with its tools (risk, status, pending changes)',
    params: idParams,
    responses: { 200: McpServer },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json(await servers.get(principalOf(req), params.id));
  });
  r.route({
    method: 'patch',
    path: '/mcp-servers/{id}',
    operationId: 'updateMcpServer',
    summary: 'Change a connected MCP server’s settings: `timeout_ms` (null: the gateway’s UPSTREAM_TIMEOUT_MS)',
    params: idParams,
    body: serverBody,
    responses: { 200: McpServer },
    errors: ['forbidden', 'not_found', 'invalid_service_definition'],
  }, async (req, res, { params, body }) => {
    res.json(await servers.update(principalOf(req), params.id, body));
  });
  r.route({
    method: 'delete',
    path: '/mcp-servers/{id}',
    operationId: 'deleteMcpServer',
    summary: 'Disconnect an MCP server (its service and actions go with it)',
    params: idParams,
    responses: { 204: null },
    errors: ['forbidden', 'not_found'],
  }, async (req, res, { params }) => {
    await servers.remove(principalOf(req), params.id);
    res.status(204).end();
  });
  r.route({
    method: 'post',
    path: '/mcp-servers/{id}/refresh',
    operationId: 'refreshMcpServer',
    summary: 'Re-list the server’s tools: new ones arrive disabled, removed ones are disabled, changed ones wait for acceptance',
    params: idParams,
    responses: { 200: McpServer },
    errors: ['forbidden', 'not_found', 'invalid_service_definition', 'credential_missing', 'secret_not_allowed_for_host', 'needs_authentication', 'reauth_required', 'upstream_error', 'upstream_unreachable', 'upstream_timeout'],
  }, async (req, res, { params }) => {
    res.json(await servers.refresh(principalOf(req), params.id));
  });
  r.route({
    method: 'patch',
    path: '/mcp-servers/{id}/tools/{tool}',
    operationId: 'updateMcpServerTool',
    summary: 'An admin’s risk, scope_param or enabled for one tool (null clears it); wins over the tool’s annotations',
    params: toolParams,
    body: toolBody,
    responses: { 200: McpServer },
    errors: ['forbidden', 'not_found', 'invalid_service_definition'],
  }, async (req, res, { params, body }) => {
    res.json(await servers.updateTool(principalOf(req), params.id, params.tool, body));
  });
  r.route({
    method: 'post',
    path: '/mcp-servers/{id}/tools/{tool}/accept',
    operationId: 'acceptMcpServerTool',
    summary: 'Publish a tool as the server describes it now (a changed tool is callable again; a new one is enabled)',
    params: toolParams,
    responses: { 200: McpServer },
    errors: ['forbidden', 'not_found', 'invalid_service_definition'],
  }, async (req, res, { params }) => {
    res.json(await servers.acceptTool(principalOf(req), params.id, params.tool));
  });
  return r.router;
}
