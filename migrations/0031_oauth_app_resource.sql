-- OAuth to an upstream MCP server (issue 43): the app the gateway registered at the server's
-- authorization server names the protected resource (RFC 8707 resource indicator), which the
-- MCP Authorization specification requires in every authorization and token request.
ALTER TABLE oauth_apps
  ADD COLUMN resource text CHECK (resource IS NULL OR char_length(resource) BETWEEN 1 AND 2000);
