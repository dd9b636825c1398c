-- The dashboard's event stream (GET /v1/events): approval events kept long enough for a client to
-- resume with Last-Event-ID. The id is the SSE event id; dedupe_key makes activity retries no-ops.
CREATE TABLE user_events (
  id bigserial PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id),
  -- The human owning the chain the event concerns (members see their own; admins the org).
  user_id uuid NOT NULL REFERENCES identities (id),
  type text NOT NULL,
  approval_id uuid,
  data jsonb NOT NULL,
  dedupe_key text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_events_org_id_idx ON user_events (org_id, id);
CREATE INDEX user_events_created_at_idx ON user_events (created_at);

-- When an MCP client last used its binding (the agents page shows it); touched at most once a
-- minute by access-token verification.
ALTER TABLE oauth_bindings ADD COLUMN last_used_at timestamptz;
