-- Upstream MCP servers (issue 43, the rest).
-- OAuth to an upstream MCP server: the app the gateway registered at the server's authorization
-- server names the protected resource (RFC 8707 resource indicator), which the MCP Authorization
-- specification requires in every authorization and token request.
ALTER TABLE oauth_apps
  ADD COLUMN resource text CHECK (resource IS NULL OR char_length(resource) BETWEEN 1 AND 2000);

-- A connected server's own upstream timeout (ms); null: UPSTREAM_TIMEOUT_MS.
ALTER TABLE mcp_servers
  ADD COLUMN timeout_ms integer CHECK (timeout_ms IS NULL OR timeout_ms BETWEEN 100 AND 600000);
