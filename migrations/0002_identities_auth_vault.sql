-- Tenancy, identities (users, agents and subagents in one tree), sessions, agent keys,
-- permission rules, login throttling, the vault, and OAuth connections.

CREATE TABLE orgs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  -- Approval clocks (DESIGN.md §5), settable per org.
  approval_ttl_seconds integer NOT NULL DEFAULT 900 CHECK (approval_ttl_seconds BETWEEN 60 AND 604800),
  approval_auto_bubble_seconds integer CHECK (approval_auto_bubble_seconds > 0),
  max_pending_per_agent integer NOT NULL DEFAULT 10 CHECK (max_pending_per_agent BETWEEN 1 AND 1000),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identities (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  kind text NOT NULL CHECK (kind IN ('user', 'agent', 'subagent')),
  parent_id uuid REFERENCES identities (id),
  -- The human at the top of the chain (a user's own id), so ownership checks need no walk.
  user_id uuid NOT NULL REFERENCES identities (id) DEFERRABLE INITIALLY DEFERRED,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  email text,
  role text CHECK (role IN ('admin', 'member')),
  password_hash text,
  inherit_permissions boolean NOT NULL DEFAULT false,
  auto_call_on_approve boolean NOT NULL DEFAULT true,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived', 'revoked')),
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  archived_at timestamptz,
  CHECK ((kind = 'user') = (parent_id IS NULL)),
  CHECK (kind <> 'user' OR (email IS NOT NULL AND role IS NOT NULL AND password_hash IS NOT NULL AND user_id = id)),
  CHECK (kind = 'user' OR (email IS NULL AND role IS NULL AND password_hash IS NULL)),
  CHECK (kind = 'subagent' OR inherit_permissions = false)
);
CREATE UNIQUE INDEX identities_user_email ON identities (lower(email)) WHERE kind = 'user';
CREATE INDEX identities_parent ON identities (parent_id);
CREATE INDEX identities_org ON identities (org_id);
CREATE INDEX identities_user ON identities (user_id);

-- Dashboard sessions: only a SHA-256 of the token is stored.
CREATE TABLE sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES identities (id),
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE login_attempts (
  id bigserial PRIMARY KEY,
  email_lower text NOT NULL,
  succeeded boolean NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_attempts_email_time ON login_attempts (email_lower, attempted_at);

-- Static agent keys `osk_…`: shown once, stored as SHA-256, listed by prefix and last use.
CREATE TABLE agent_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL REFERENCES identities (id),
  prefix text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  name text,
  created_by uuid NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX agent_keys_identity ON agent_keys (identity_id);

CREATE TABLE permission_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  identity_id uuid NOT NULL REFERENCES identities (id),
  effect text NOT NULL CHECK (effect IN ('allow', 'deny')),
  pattern text NOT NULL,
  expires_at timestamptz,
  source text NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'approval')),
  approval_id uuid,
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX permission_rules_identity ON permission_rules (identity_id) WHERE revoked_at IS NULL;

-- The vault: one row per secret name, one per version. `envelope` holds only ciphertext, IVs,
-- tags, the wrapped data key and its KEK id (core/vault/envelope.ts); never plaintext.
CREATE TABLE secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  name text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,128}$'),
  description text,
  current_version integer NOT NULL DEFAULT 0,
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX secrets_org_name ON secrets (org_id, name) WHERE deleted_at IS NULL;

CREATE TABLE secret_versions (
  secret_id uuid NOT NULL REFERENCES secrets (id),
  version integer NOT NULL CHECK (version >= 1),
  envelope jsonb NOT NULL,
  kek_id text NOT NULL,
  restored_from integer,
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (secret_id, version)
);

-- Per-provider OAuth app credentials of an org; the client secret lives in the vault.
CREATE TABLE oauth_apps (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  provider text NOT NULL,
  client_id text NOT NULL,
  client_secret_id uuid REFERENCES secrets (id),
  authorization_url text NOT NULL,
  token_url text NOT NULL,
  revocation_url text,
  userinfo_url text,
  use_pkce boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, provider)
);

CREATE TABLE connections (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  owner_id uuid NOT NULL REFERENCES identities (id),
  name text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,128}$'),
  provider text NOT NULL,
  template text,
  status text NOT NULL CHECK (status IN ('pending', 'active', 'reauth_required', 'revoked')),
  requested_scopes text[] NOT NULL DEFAULT '{}',
  granted_scopes text[] NOT NULL DEFAULT '{}',
  account_id text,
  account_name text,
  -- Encrypted envelopes (core/vault/envelope.ts); null until the callback stores tokens.
  access_token jsonb,
  refresh_token jsonb,
  token_expires_at timestamptz,
  -- The pending authorization: state is single-use, the PKCE verifier is encrypted.
  state_hash bytea UNIQUE,
  pkce_verifier jsonb,
  state_expires_at timestamptz,
  redirect_after text,
  refresh_count integer NOT NULL DEFAULT 0,
  last_refreshed_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX connections_org_name ON connections (org_id, name) WHERE status <> 'revoked';
CREATE INDEX connections_owner ON connections (owner_id);
