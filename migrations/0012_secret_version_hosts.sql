-- Credentials go only where they are bound (issue 25): each secret version records the
-- allowed_hosts in force when it was written, so restoring a version restores its hosts too (a
-- value and the hosts it was trusted for belong together). Versions written before this record
-- the secret's current list, the best knowledge there is.
ALTER TABLE secret_versions ADD COLUMN allowed_hosts text[];
UPDATE secret_versions v SET allowed_hosts = s.allowed_hosts FROM secrets s WHERE s.id = v.secret_id;
