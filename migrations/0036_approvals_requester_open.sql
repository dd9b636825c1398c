-- The blast radius weighs only the open approvals a remembered rule could reach: those whose
-- requester is a rule target or below one (issue 46). Read per identity of those subtrees, newest
-- first, from this index: O(subtree's open approvals), not the org's open approvals.
CREATE INDEX approvals_requester_open ON approvals (requester_id, created_at DESC) WHERE status IN ('pending', 'bubbled');
