-- The durable call's read model (written by workflow activities), the append-only audit log,
-- and webhook subscriptions with every delivery attempt.

-- Clocks may be short in tests; the API still bounds them.
ALTER TABLE orgs DROP CONSTRAINT IF EXISTS orgs_approval_ttl_seconds_check;
ALTER TABLE orgs ADD CONSTRAINT orgs_approval_ttl_seconds_check CHECK (approval_ttl_seconds BETWEEN 1 AND 604800);

CREATE TABLE calls (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id),
  requester_id uuid NOT NULL REFERENCES identities (id),
  user_id uuid NOT NULL REFERENCES identities (id),
  service text NOT NULL,
  template text NOT NULL,
  action text NOT NULL,
  runtime text NOT NULL DEFAULT 'http',
  risk text NOT NULL CHECK (risk IN ('read', 'write', 'delete')),
  permission_keys text[] NOT NULL,
  description text NOT NULL,
  -- What was asked, with `redact` paths replaced: safe to show and to keep.
  request_redacted jsonb NOT NULL,
  -- The full request, encrypted (AAD call:<id>): the replay after an approval needs it.
  request_envelope jsonb NOT NULL,
  disclosed jsonb NOT NULL DEFAULT '[]',
  status text NOT NULL DEFAULT 'checking',
  http_status_code integer,
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX calls_org_time ON calls (org_id, created_at DESC);

CREATE TABLE approvals (
  id uuid PRIMARY KEY,
  call_id uuid NOT NULL REFERENCES calls (id),
  org_id uuid NOT NULL REFERENCES orgs (id),
  requester_id uuid NOT NULL REFERENCES identities (id),
  user_id uuid NOT NULL REFERENCES identities (id),
  gap_identity_id uuid NOT NULL REFERENCES identities (id),
  resolver_id uuid NOT NULL REFERENCES identities (id),
  status text NOT NULL CHECK (status IN ('pending', 'allowed', 'denied', 'bubbled', 'expired', 'superseded', 'cancelled')),
  risk text NOT NULL CHECK (risk IN ('low', 'med', 'high')),
  permission_keys text[] NOT NULL,
  derived_keys text[] NOT NULL,
  suggested_tiers jsonb NOT NULL,
  action_description text NOT NULL,
  auto_call_on_approve boolean NOT NULL,
  -- Identical pending requests of one agent share one approval.
  dedupe_key text NOT NULL,
  expires_at timestamptz NOT NULL,
  decision text,
  reason text,
  remember_keys text[],
  remember_ttl text,
  resolved_by uuid REFERENCES identities (id),
  resolved_at timestamptz,
  bubble_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX approvals_org_status ON approvals (org_id, status, created_at DESC);
CREATE INDEX approvals_requester_pending ON approvals (requester_id, created_at) WHERE status = 'pending';
CREATE UNIQUE INDEX approvals_dedupe_pending ON approvals (requester_id, dedupe_key) WHERE status = 'pending';

CREATE TABLE executions (
  id uuid PRIMARY KEY,
  approval_id uuid NOT NULL UNIQUE REFERENCES approvals (id),
  status text NOT NULL CHECK (status IN ('pending', 'executing', 'executed', 'failed', 'cancelled', 'expired')),
  runtime text NOT NULL CHECK (runtime IN ('http', 'mcp', 'platform')),
  triggered_by text CHECK (triggered_by IN ('user', 'agent', 'auto')),
  http_status_code integer,
  result jsonb,
  error jsonb,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);

-- Append-only: the app may insert and read, never change or remove.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  org_id uuid NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  event text NOT NULL,
  user_id uuid,
  actor_id uuid,
  identity_chain uuid[] NOT NULL DEFAULT '{}',
  service text,
  action text,
  permission_keys text[] NOT NULL DEFAULT '{}',
  decision text,
  call_id uuid,
  approval_id uuid,
  execution_id uuid,
  http_status_code integer,
  details jsonb NOT NULL DEFAULT '{}',
  request_id text
);
CREATE INDEX audit_org_id ON audit_log (org_id, id DESC);
CREATE INDEX audit_org_event ON audit_log (org_id, event, id DESC);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();

CREATE TABLE webhooks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  url text NOT NULL,
  events text[] NOT NULL,
  -- The signing secret, encrypted (AAD webhook:<id>); shown once at creation.
  secret_envelope jsonb NOT NULL,
  description text,
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX webhooks_org ON webhooks (org_id) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  webhook_id uuid NOT NULL REFERENCES webhooks (id),
  event_id text NOT NULL,
  event_type text NOT NULL,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  duration_ms integer,
  attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, attempted_at DESC);
