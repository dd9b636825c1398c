-- Reads that hold up as an org grows (issue 46, `npm run bench:scale`).
-- The inbox ("Decide": the org's open approvals, newest first, a keyset page of
-- server/approvals/store.ts approvalViewsQuery) walked every approval of the org newest-first
-- until it had a page of open ones: as many rows as were decided since the oldest open one. Open
-- approvals are a small, changing part of the table: a partial index holds only them, in page order.
CREATE INDEX approvals_open_time ON approvals (org_id, created_at DESC, id DESC) WHERE status IN ('pending', 'bubbled');
-- Every approval read names the org's active admins (who decides past the user); they were found
-- among all the org's identities. The admins alone, by org.
CREATE INDEX identities_org_admins ON identities (org_id) WHERE kind = 'user' AND role = 'admin';
-- The blast radius weighs a tier against the org's live rules: there was no index by org, so it
-- read the rules of every org.
CREATE INDEX permission_rules_org_live ON permission_rules (org_id) WHERE revoked_at IS NULL;
