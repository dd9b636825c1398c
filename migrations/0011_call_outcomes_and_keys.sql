-- At most once on every path, and a caller can always learn what happened (issue 24).
-- A covered call's outcome is kept on its row: a re-run of its workflow task (a crash before the
-- task completed) finds the final status and returns what was recorded instead of sending again,
-- and `GET /v1/calls/{id}` reads it. `request_digest` is the keyed digest of what was asked: a
-- retry with the same Idempotency-Key must ask the same thing (else 409 idempotency_key_reused).
-- `approval_id`: the approval the call raised, or the identical pending one it joined.
ALTER TABLE calls ADD COLUMN result jsonb;
ALTER TABLE calls ADD COLUMN error jsonb;
ALTER TABLE calls ADD COLUMN request_digest text;
ALTER TABLE calls ADD COLUMN approval_id uuid;
