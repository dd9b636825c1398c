// Lists an upstream MCP server's tools (every `tools/list` page) with the official client, bounded
// so a bad upstream answers a typed error and never holds a request: one deadline for the whole
// exchange, a page limit, a tool limit, a per-tool schema size limit, and a list that changes
// between pages (a name seen twice) refused. Transport errors map as the `mcp` runtime's do.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { UpstreamTool } from '../../core/mcp-servers/tools.ts';
import { AppError } from '../errors.ts';
import { CLIENT_INFO, close, toAppError } from '../execution/runtimes/mcp.ts';

export interface DiscoveryLimits {
  timeoutMs: number;
  maxTools: number;
  maxPages: number;
  /** Bytes of one tool's JSON (its input schema and annotations included). */
  maxToolBytes: number;
}

export const DEFAULT_DISCOVERY_LIMITS: DiscoveryLimits = { timeoutMs: 15_000, maxTools: 500, maxPages: 50, maxToolBytes: 64 * 1024 };

const refused = (message: string, details?: Record<string, unknown>) => new AppError('upstream_error', message, details);

export async function discoverTools(url: URL, headers: Record<string, string>, limits: DiscoveryLimits = DEFAULT_DISCOVERY_LIMITS): Promise<UpstreamTool[]> {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { ...headers, 'user-agent': `${CLIENT_INFO.name}/${CLIENT_INFO.version}` } },
  });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error(`no answer within ${limits.timeoutMs} ms`)), limits.timeoutMs);
  const opts = { signal: deadline.signal, timeout: limits.timeoutMs };
  try {
    await client.connect(transport, opts);
    if (!client.getServerCapabilities()?.tools) throw refused(`the MCP server ${url.host} offers no tools`);
    const tools: UpstreamTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= limits.maxPages) throw refused(`the MCP server ${url.host} lists more than ${limits.maxPages} pages of tools`, { max_pages: limits.maxPages });
      const list = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, opts);
      for (const tool of list.tools) {
        if (seen.has(tool.name)) throw refused(`the MCP server ${url.host} listed tool "${tool.name}" twice: its tool list changed between pages; refresh again`, { tool: tool.name });
        seen.add(tool.name);
        const bytes = Buffer.byteLength(JSON.stringify(tool));
        if (bytes > limits.maxToolBytes) throw refused(`tool "${tool.name}" is ${bytes} bytes; at most ${limits.maxToolBytes} are accepted`, { tool: tool.name, max_tool_bytes: limits.maxToolBytes });
        tools.push(tool as UpstreamTool);
      }
      if (tools.length > limits.maxTools) throw refused(`the MCP server ${url.host} lists more than ${limits.maxTools} tools`, { max_tools: limits.maxTools });
      cursor = list.nextCursor;
      if (!cursor) return tools;
    }
  } catch (err) {
    throw toAppError(err, { url, tool: 'tools/list', timeoutMs: limits.timeoutMs }, deadline.signal.aborted);
  } finally {
    clearTimeout(timer);
    await close(client, transport);
  }
}
