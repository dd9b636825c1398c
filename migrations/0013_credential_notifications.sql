-- Streams end when their credential does (issue 25): every change that ends a credential — an
-- identity revoked or archived, an agent key or a session revoked or removed, an MCP binding or
-- an OAuth client revoked, an access token revoked — announces itself on one channel, whatever
-- code path wrote it. Every process LISTENs and re-checks the credentials of its open streams
-- (server/auth/stream-guard.ts). Notifications carry no payload: nothing about who or what.
CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('gateway_credentials', '');
  RETURN NULL;
END $$;

CREATE TRIGGER identities_credentials_changed AFTER UPDATE ON identities
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER sessions_credentials_changed AFTER UPDATE ON sessions
  FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER sessions_credentials_removed AFTER DELETE ON sessions
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER agent_keys_credentials_changed AFTER UPDATE ON agent_keys
  FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER agent_keys_credentials_removed AFTER DELETE ON agent_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER oauth_bindings_credentials_changed AFTER UPDATE ON oauth_bindings
  FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER oauth_client_revocations_added AFTER INSERT ON oauth_client_revocations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER oauth_revoked_access_tokens_added AFTER INSERT ON oauth_revoked_access_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
