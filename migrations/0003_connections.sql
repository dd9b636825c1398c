-- OAuth connections (issue 4 item 6).
--
-- oauth_apps: how the gateway authenticates at the provider's token endpoint, and who configured
-- the app. The client secret stays in the vault (client_secret_id → secrets, by the name
-- `oauth_app.<provider>.client_secret`), so master-key rotation covers it like any secret.
ALTER TABLE oauth_apps
  ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_basic'
    CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'none')),
  ADD COLUMN created_by uuid REFERENCES identities (id),
  ADD COLUMN updated_by uuid REFERENCES identities (id),
  ADD CONSTRAINT oauth_apps_provider_format CHECK (provider ~ '^[a-z0-9][a-z0-9_.-]{0,63}$');

-- connections: when the current access token was obtained, so "refresh before expiry" can use a
-- margin proportional to the token's lifetime (a 5-minute token is not refreshed on every call
-- just because the default margin is a minute).
--
-- The pkce_verifier envelope holds the pending authorization's secrets as JSON {state, verifier}:
-- state_hash finds the row, and a still-valid auth_url can be handed out again (needs_authentication)
-- without invalidating the one the user may already have open.
ALTER TABLE connections
  ADD COLUMN token_issued_at timestamptz;

CREATE INDEX connections_org_created ON connections (org_id, created_at);
