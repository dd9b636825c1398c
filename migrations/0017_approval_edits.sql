-- Edit before approve (issue 31): an approver may allow a narrowed version of the request. The
-- approval keeps the edited request beside the original (which stays on the call row): encrypted
-- for the send (bound to the call id, like calls.request_envelope), redacted for every viewer, the
-- field-level diff, and the keys and description re-derived from it.
ALTER TABLE approvals
  ADD COLUMN edited_request_envelope jsonb,
  ADD COLUMN edited_request_redacted jsonb,
  ADD COLUMN edit_diff jsonb,
  ADD COLUMN edited_permission_keys text[],
  ADD COLUMN edited_description text;
