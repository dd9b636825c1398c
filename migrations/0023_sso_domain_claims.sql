-- An email domain belongs to at most one org's single sign-on (issue 15): just-in-time join makes
-- anyone of an allowed domain a member, so two orgs listing one domain would let either take in
-- the other's people. The primary key makes the claim exclusive whatever races; a JIT join reads
-- the claim of its domain inside its own transaction (server/teams/service.ts joinWithSso).
CREATE TABLE sso_domain_claims (
  domain text PRIMARY KEY CHECK (domain = lower(domain) AND length(domain) BETWEEN 1 AND 253),
  org_id uuid NOT NULL REFERENCES orgs (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_domain_claims_org ON sso_domain_claims (org_id);

-- Configurations made before: each domain goes to the org that configured it first. Another org
-- listing it still signs in the people it invites, but joins nobody just in time, and must drop
-- the domain at its next change of configuration.
INSERT INTO sso_domain_claims (domain, org_id)
SELECT DISTINCT ON (d.domain) d.domain, c.org_id
FROM sso_configs c, unnest(c.allowed_domains) AS d(domain)
ORDER BY d.domain, c.created_at, c.org_id
ON CONFLICT (domain) DO NOTHING;
