// Data for the connected-MCP-server pages: connect, list, one server with its tools, refresh,
// per-tool overrides and accepting a changed tool.
import { api, unwrap, type components } from '../client.ts';

export type McpServer = components['schemas']['McpServer'];
export type McpServerTool = components['schemas']['McpServerTool'];
export type UpstreamAuth = McpServer['auth'];

const byId = (id: string) => ({ params: { path: { id } } });
const byTool = (id: string, tool: string) => ({ params: { path: { id, tool } } });

export const listMcpServers = async () => (await unwrap(api.GET('/v1/mcp-servers'))).mcp_servers;
export const getMcpServer = (id: string) => unwrap(api.GET('/v1/mcp-servers/{id}', byId(id)));
export const connectMcpServer = (body: { name: string; url: string; auth: UpstreamAuth; scope: 'org' | 'user' }) => unwrap(api.POST('/v1/mcp-servers', { body }));
export const refreshMcpServer = (id: string) => unwrap(api.POST('/v1/mcp-servers/{id}/refresh', byId(id)));
export const deleteMcpServer = (id: string) => unwrap(api.DELETE('/v1/mcp-servers/{id}', byId(id)));
export const updateMcpServerTool = (id: string, tool: string, body: { risk?: 'read' | 'write' | 'delete' | null; enabled?: boolean | null; scope_param?: string | null }) =>
  unwrap(api.PATCH('/v1/mcp-servers/{id}/tools/{tool}', { ...byTool(id, tool), body }));
export const acceptMcpServerTool = (id: string, tool: string) => unwrap(api.POST('/v1/mcp-servers/{id}/tools/{tool}/accept', byTool(id, tool)));
