-- Teams (issue 29): a third role, each person's approver, invitations, and where an approval
-- escalated past its requester's user went (the user's approver, then the org's admins).

ALTER TABLE identities DROP CONSTRAINT IF EXISTS identities_role_check;
ALTER TABLE identities ADD CONSTRAINT identities_role_check CHECK (role IN ('admin', 'member', 'approver'));

-- The person "Bubble up" goes to from this person; none: the org's admins.
ALTER TABLE identities ADD COLUMN approver_id uuid REFERENCES identities (id);
ALTER TABLE identities ADD CONSTRAINT identities_approver_of_users CHECK (approver_id IS NULL OR (kind = 'user' AND approver_id <> id));

-- Who deactivated a person, and when (the row, its agents and its audit stay).
ALTER TABLE identities ADD COLUMN deactivated_at timestamptz;
ALTER TABLE identities ADD COLUMN deactivated_by uuid REFERENCES identities (id);

-- Single-use, expiring invitations: only a SHA-256 of the link's token is stored.
CREATE TABLE invitations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
  role text NOT NULL CHECK (role IN ('admin', 'member', 'approver')),
  approver_id uuid REFERENCES identities (id),
  token_hash bytea NOT NULL UNIQUE,
  created_by uuid NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_by uuid REFERENCES identities (id),
  revoked_at timestamptz
);
CREATE INDEX invitations_org ON invitations (org_id, created_at DESC);
-- One open invitation per address in an org.
CREATE UNIQUE INDEX invitations_open_email ON invitations (org_id, lower(email)) WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Past the requester's user: `approver` (resolver_id is the user's approver) or `admins` (any admin
-- of the org decides; resolver_id stays the last person it was with). `chain`: inside the identity
-- chain, where the call's workflow moves it.
ALTER TABLE approvals ADD COLUMN routed_to text NOT NULL DEFAULT 'chain' CHECK (routed_to IN ('chain', 'approver', 'admins'));
ALTER TABLE approvals ADD COLUMN routed_from uuid REFERENCES identities (id);
CREATE INDEX approvals_routed_resolver ON approvals (resolver_id) WHERE routed_to = 'approver' AND status = 'bubbled';

-- Single sign-on with OpenID Connect, one identity provider per org. The client secret is a vault
-- secret (`client_secret_id`); `verified_at` is the first successful SSO sign-in (password
-- sign-in may be turned off only after it).
CREATE TABLE sso_configs (
  org_id uuid PRIMARY KEY REFERENCES orgs (id),
  issuer text NOT NULL CHECK (length(issuer) BETWEEN 8 AND 2048),
  client_id text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 512),
  client_secret_id uuid NOT NULL REFERENCES secrets (id),
  allowed_domains text[] NOT NULL CHECK (cardinality(allowed_domains) BETWEEN 1 AND 50),
  jit boolean NOT NULL DEFAULT false,
  display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 100),
  password_signin boolean NOT NULL DEFAULT true,
  verified_at timestamptz,
  updated_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (password_signin OR verified_at IS NOT NULL)
);

-- One SSO sign-in under way: a SHA-256 of its `state`, its nonce and PKCE verifier; used once.
-- `browser_hash`: a SHA-256 of the cookie set in the browser that started it (login CSRF: a
-- callback URL carried to another browser does not sign that browser in).
CREATE TABLE sso_logins (
  state_hash bytea PRIMARY KEY,
  browser_hash bytea NOT NULL,
  org_id uuid NOT NULL REFERENCES orgs (id),
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  invitation_id uuid REFERENCES invitations (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

-- Who a person is at the identity provider (iss + sub), once they signed in with it.
CREATE TABLE sso_subjects (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id uuid NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX sso_subjects_user ON sso_subjects (user_id, issuer);
