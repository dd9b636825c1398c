// The 2025 revisions (2025-06-18, 2025-11-25, and the older ones the SDK still negotiates) on the
// SDK's streamable HTTP transport: stateless (no session id, a server per request) and answering
// plain JSON, as /mcp always did; a request that asks for progress is answered as an SSE stream
// (the progress notifications, then the result), which the 2025 transport lets a server choose.
import { WebStandardStreamableHTTPServerTransport, type AuthInfo, type Server } from '@modelcontextprotocol/server';

/** Serves one 2025-era POST (checked by message-guard.ts) with a fresh server from `serverFor`. */
export async function serveLegacy(request: Request, body: unknown, authInfo: AuthInfo, serverFor: () => Promise<Server>, opts: { stream?: boolean } = {}): Promise<Response> {
  const server = await serverFor();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !opts.stream });
  await server.connect(transport);
  if (opts.stream) {
    // The stream ends with the result: the server goes when the transport closes it.
    transport.onclose = () => void server.close();
    return transport.handleRequest(request, { parsedBody: body, authInfo });
  }
  try {
    return await transport.handleRequest(request, { parsedBody: body, authInfo });
  } finally {
    // JSON mode: the answer is complete once it resolves.
    void server.close();
  }
}
