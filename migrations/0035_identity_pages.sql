-- The agents page in keyset pages (issue 46): GET /v1/identities reads a page oldest first
-- (created_at, id) of the org (admins), of one kind in the org (the people), or of one person's
-- tree (members), each a range of one of these. They lead with the columns of identities_org and
-- identities_user, which they replace.
CREATE INDEX identities_org_page ON identities (org_id, created_at, id);
CREATE INDEX identities_org_kind_page ON identities (org_id, kind, created_at, id);
CREATE INDEX identities_user_page ON identities (user_id, created_at, id);
DROP INDEX identities_org;
DROP INDEX identities_user;
