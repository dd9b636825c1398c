-- A credential change names whom it concerns, so a process re-checks only the streams it can end
-- (server/auth/stream-guard.ts) instead of every open stream: with 500 open dashboards one person
-- signing out was 500 re-authentications. The payload is `identity:<id>` (the identity whose
-- credential or status changed: a stream of it, or of anyone below it, is re-checked),
-- `org:<id>` (an OAuth client revoked for an org) or empty (an access token revoked: everyone).
-- Still nothing secret: ids only, on a channel only the gateway's own role listens to.
CREATE OR REPLACE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  target text := '';
BEGIN
  -- Each table's own column, in its own branch (a record's fields resolve per statement).
  IF TG_LEVEL = 'ROW' THEN
    IF TG_TABLE_NAME = 'identities' THEN
      target := 'identity:' || NEW.id;
    ELSIF TG_TABLE_NAME = 'sessions' AND TG_OP = 'DELETE' THEN
      target := 'identity:' || OLD.user_id;
    ELSIF TG_TABLE_NAME = 'sessions' THEN
      target := 'identity:' || NEW.user_id;
    ELSIF TG_TABLE_NAME = 'agent_keys' AND TG_OP = 'DELETE' THEN
      target := 'identity:' || OLD.identity_id;
    ELSIF TG_TABLE_NAME = 'agent_keys' THEN
      target := 'identity:' || NEW.identity_id;
    ELSIF TG_TABLE_NAME = 'oauth_bindings' THEN
      target := 'identity:' || NEW.agent_id;
    ELSIF TG_TABLE_NAME = 'oauth_client_revocations' THEN
      target := 'org:' || NEW.org_id;
    END IF;
  END IF;
  PERFORM pg_notify('gateway_credentials', target);
  RETURN NULL;
END $$;

-- Removals and org-wide revocations become row triggers so each names its target (pg_notify
-- folds identical payloads of one transaction into one notification).
DROP TRIGGER sessions_credentials_removed ON sessions;
CREATE TRIGGER sessions_credentials_removed AFTER DELETE ON sessions
  FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed();
DROP TRIGGER agent_keys_credentials_removed ON agent_keys;
CREATE TRIGGER agent_keys_credentials_removed AFTER DELETE ON agent_keys
  FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed();
DROP TRIGGER oauth_client_revocations_added ON oauth_client_revocations;
CREATE TRIGGER oauth_client_revocations_added AFTER INSERT ON oauth_client_revocations
  FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed();
