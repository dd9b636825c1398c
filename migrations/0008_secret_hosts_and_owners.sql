-- Where a vault secret may be sent, and whose it is (issue 12).
-- allowed_hosts: exact hostnames or `*.example.com` patterns raw HTTP may inject the secret toward;
--   NULL = service templates only (they bind their own hosts). Existing secrets get NULL, so they
--   keep working for the templates that use them and nothing else.
-- owner_id: NULL = the org's secret (usable by every user of the org and their agents); a user id =
--   that user's own secret (usable by that user's chains only). Existing secrets stay the org's.
ALTER TABLE secrets ADD COLUMN allowed_hosts text[];
ALTER TABLE secrets ADD COLUMN owner_id uuid REFERENCES identities (id);
ALTER TABLE secrets ADD CONSTRAINT secrets_allowed_hosts_bounded
  CHECK (allowed_hosts IS NULL OR cardinality(allowed_hosts) <= 50);
