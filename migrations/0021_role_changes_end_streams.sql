-- A person's role decides what their GET /v1/events stream may carry (the org's events or their
-- own): a change of role is announced on the credentials channel like a change of status, so
-- every process re-checks its open streams at once and ends those whose standing changed
-- (server/auth/stream-guard.ts, server/events/routes.ts).
DROP TRIGGER identities_credentials_changed ON identities;
CREATE TRIGGER identities_credentials_changed AFTER UPDATE ON identities
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.role IS DISTINCT FROM NEW.role)
  EXECUTE FUNCTION notify_credentials_changed();
