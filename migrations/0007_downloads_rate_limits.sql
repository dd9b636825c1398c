-- Binary downloads of `response_type: binary` actions: kept briefly, readable by the requester's
-- chain through GET /v1/downloads/{id}. And token buckets for the per-agent rate limit.
CREATE TABLE downloads (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  requester_id uuid REFERENCES identities (id),
  content_type text NOT NULL,
  size integer NOT NULL,
  sha256 text NOT NULL,
  data bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX downloads_expires ON downloads (expires_at);

CREATE TABLE rate_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  last_allowed boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
