-- The gateway's own OAuth 2.1 authorization server (server/oauth): node-oidc-provider's storage,
-- its signing and cookie keys, the (user, client) → agent bindings, per-org client revocations and
-- revoked JWT access tokens.

-- Every oidc-provider model (Client, Grant, Session, Interaction, AuthorizationCode, RefreshToken,
-- …) in one table, keyed by (type, id). Secondary keys are the ones the adapter interface looks up.
CREATE TABLE oidc_payloads (
  id text NOT NULL,
  type text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  user_code text,
  uid text,
  expires_at timestamptz,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (type, id)
);
CREATE INDEX oidc_payloads_grant ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_payloads_uid ON oidc_payloads (type, uid) WHERE uid IS NOT NULL;
CREATE INDEX oidc_payloads_user_code ON oidc_payloads (type, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oidc_payloads_expires ON oidc_payloads (expires_at) WHERE expires_at IS NOT NULL;
-- Grants of one (user, client) pair, for revoking a binding or a client.
CREATE INDEX oidc_payloads_grant_owner ON oidc_payloads ((payload->>'accountId'), (payload->>'clientId')) WHERE type = 'Grant';

-- Signing keys (JWKS) and cookie-signing keys. The private half is a vault envelope sealed by the
-- master key; the public JWK of a signing key is kept in clear for verification and the jwks_uri.
-- A rotated key stops signing (retired_at) but keeps verifying until it is pruned.
CREATE TABLE oauth_keys (
  id text PRIMARY KEY,
  use text NOT NULL CHECK (use IN ('sig', 'cookie')),
  public_jwk jsonb,
  envelope jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  CHECK (use <> 'sig' OR public_jwk IS NOT NULL)
);
CREATE INDEX oauth_keys_use ON oauth_keys (use, created_at);

-- The pair (user, client) is bound to one agent, chosen at first consent. At most one live binding
-- per pair; a revoked binding (by the user, an admin revoking the client, or because its agent was
-- archived) is kept for the record.
CREATE TABLE oauth_bindings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES identities (id),
  client_id text NOT NULL,
  agent_id uuid NOT NULL REFERENCES identities (id),
  -- The provider grant currently backing this binding (tokens carry their own grant id).
  grant_id text,
  self_approve_enabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE UNIQUE INDEX oauth_bindings_live_pair ON oauth_bindings (user_id, client_id) WHERE revoked_at IS NULL;
CREATE INDEX oauth_bindings_client ON oauth_bindings (client_id);
CREATE INDEX oauth_bindings_agent ON oauth_bindings (agent_id);

-- Clients are registered openly and shared by the deployment; an org admin revokes one for the org.
CREATE TABLE oauth_client_revocations (
  org_id uuid NOT NULL REFERENCES orgs (id),
  client_id text NOT NULL,
  revoked_by uuid REFERENCES identities (id),
  revoked_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, client_id)
);

-- JWT access tokens are not stored; revoking one (RFC 7009) records its jti until it expires.
CREATE TABLE oauth_revoked_access_tokens (
  jti text PRIMARY KEY,
  client_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_revoked_access_tokens_expires ON oauth_revoked_access_tokens (expires_at);
