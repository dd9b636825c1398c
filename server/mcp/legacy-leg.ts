// The 2025 revisions (2025-06-18, 2025-11-25, and the older ones the SDK still negotiates) on the
// SDK's streamable HTTP transport: stateless (no session id, a server per request) and answering
// plain JSON, as /mcp always did.
import { WebStandardStreamableHTTPServerTransport, type AuthInfo, type Server } from '@modelcontextprotocol/server';

/** Serves one 2025-era POST (checked by message-guard.ts) with a fresh server from `serverFor`. */
export async function serveLegacy(request: Request, body: unknown, authInfo: AuthInfo, serverFor: () => Promise<Server>): Promise<Response> {
  const server = await serverFor();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body, authInfo });
  } finally {
    // JSON mode: the answer is complete once it resolves.
    void server.close();
  }
}
