-- Audit search at scale (issue 19). A page of GET /v1/audit (server/audit/store.ts,
-- auditRowsQuery) is `WHERE org_id = … AND <filters> ORDER BY id DESC LIMIT n`. With only
-- (org_id, id) and (org_id, event, id) a filter that matches little walked the org's rows
-- newest-first until it had read them all (a million rows: 0.3-1 s). Each filter of the audit
-- page gets an index that starts with org_id and its equality columns and ends with id, so the
-- rows come out already in page order and a LIMIT stops early; the pairs whose columns depend on
-- each other (an action belongs to a service, an outcome to an event) get one index for the pair,
-- since each alone can match many rows while the pair matches none.
CREATE INDEX audit_org_service_action ON audit_log (org_id, service, action, id DESC);
CREATE INDEX audit_org_action ON audit_log (org_id, action, id DESC);
CREATE INDEX audit_org_event_decision ON audit_log (org_id, event, decision, id DESC);
CREATE INDEX audit_org_decision ON audit_log (org_id, decision, id DESC);
-- A member sees the rows of their own chains (user_id); `identity` and an agent's own view match
-- an id anywhere in the chain (`identity_chain @> ARRAY[…]`), which a GIN index answers.
CREATE INDEX audit_org_user ON audit_log (org_id, user_id, id DESC);
CREATE INDEX audit_identity_chain ON audit_log USING gin (identity_chain);
-- From / Until: a short window anywhere in the log.
CREATE INDEX audit_org_at ON audit_log (org_id, at);
-- The planner assumes columns independent: call.called (most rows) with denied (some rows) looks
-- like thousands of rows spread over the log, so it would walk the primary key expecting to find
-- a page soon. Statistics on the dependent pairs tell it the pair is rare, and it takes the pair's
-- index instead.
CREATE STATISTICS audit_log_service_action (mcv, dependencies) ON service, action FROM audit_log;
CREATE STATISTICS audit_log_event_decision (mcv, dependencies) ON event, decision FROM audit_log;
