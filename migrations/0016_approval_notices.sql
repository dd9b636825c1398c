-- Approvals announced where people are (issue 30): notification channels (Slack, email over SMTP),
-- routing rules, every delivery with its final state, and the single-use email decision links.

CREATE TABLE notification_channels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  kind text NOT NULL CHECK (kind IN ('slack', 'email')),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- What is not secret: slack {channel, dm_resolver, api_base_url}; email {host, port, starttls, user, from}.
  config jsonb NOT NULL,
  -- The secrets, sealed by the vault's keyring (AAD notification-channel:<id>): slack {bot_token,
  -- signing_secret}; email {password}. Never returned, logged or put into a workflow payload.
  secret_envelope jsonb NOT NULL,
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX notification_channels_name ON notification_channels (org_id, lower(name)) WHERE deleted_at IS NULL;
CREATE INDEX notification_channels_kind ON notification_channels (kind) WHERE deleted_at IS NULL;

-- Ordered rules: the first whose conditions all hold routes the approval; a rule without
-- conditions is the default route. No rule at all: every channel of the org, to the resolver.
CREATE TABLE notification_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  position integer NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- {risk?: [], service?: [], action?: [], requester_id?: []}
  match jsonb NOT NULL,
  -- [{channel_id, to: 'resolver' | 'admins' | 'channel'}]
  routes jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_rules_org ON notification_rules (org_id, position);

-- Reminder points, per org (null: the defaults, half-life and 2 minutes before expiry).
CREATE TABLE notification_settings (
  org_id uuid PRIMARY KEY REFERENCES orgs (id),
  -- e.g. ["half", "120s"]: a fraction of the TTL elapsed, or seconds before expiry.
  reminders jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notification_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  approval_id uuid NOT NULL REFERENCES approvals (id),
  channel_id uuid NOT NULL REFERENCES notification_channels (id),
  kind text NOT NULL CHECK (kind IN ('slack', 'email')),
  -- raised | bubbled | reminder-<n>
  purpose text NOT NULL,
  -- A Slack channel id, or a person's identity id (DM or email).
  target text NOT NULL,
  recipient_id uuid REFERENCES identities (id),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  error text,
  -- Where the Slack message is, to update it in place with the outcome.
  slack_channel text,
  slack_ts text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  UNIQUE (approval_id, channel_id, purpose, target)
);
CREATE INDEX notification_deliveries_approval ON notification_deliveries (approval_id, created_at);

-- Email decision links: the signature binds person + approval + decision; the row makes it single-use.
CREATE TABLE email_decision_links (
  id uuid PRIMARY KEY,
  approval_id uuid NOT NULL REFERENCES approvals (id),
  person_id uuid NOT NULL REFERENCES identities (id),
  decision text NOT NULL CHECK (decision IN ('allow_once', 'deny')),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
