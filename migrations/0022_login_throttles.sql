-- Password sign-in throttling (issue 14): counters of failed attempts per source, per account and
-- source, and per account, each with the time before which its next attempt is refused
-- (server/auth/login-throttle.ts). Shared by every API replica; no tenant content (keys are an
-- address and a lower-cased email).
CREATE TABLE login_throttles (
  key text PRIMARY KEY CHECK (length(key) <= 700),
  failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  last_failure_at timestamptz,
  blocked_until timestamptz
);
CREATE INDEX login_throttles_last_failure ON login_throttles (last_failure_at);
