-- Calls that joined another call's pending approval (status `deduplicated`) are found by that
-- approval when it ends, so their workflows can end with the shared outcome (issue 26).
CREATE INDEX calls_joined_approval ON calls (approval_id) WHERE status = 'deduplicated';
