-- The approvals page at scale (issue 19, like the audit search): a page of GET /v1/approvals
-- (server/approvals/store.ts, approvalViewsQuery) is the org's approvals in the viewer's scope
-- `ORDER BY created_at DESC, id DESC LIMIT n`. Only (org_id, status, created_at) existed, so the
-- history (no status) sorted every approval of the org, and "Mine", "Assigned" and a member's
-- history filtered every one of them. Each scope's column gets an index in page order.
-- History, newest first, and its next pages (keyset on created_at, id).
CREATE INDEX approvals_org_time ON approvals (org_id, created_at DESC, id DESC);
-- Mine and a member's history: raised by an identity of the viewer's subtree.
CREATE INDEX approvals_requester_time ON approvals (requester_id, created_at DESC, id DESC);
-- Assigned, and what was routed to the viewer as a person's approver.
CREATE INDEX approvals_resolver_time ON approvals (resolver_id, created_at DESC, id DESC);
