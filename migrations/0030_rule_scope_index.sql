-- The permission check reads only the rules its keys can need (issue 46): those of each identity
-- on the chain whose service and action segments are the keys' own or `*` (or `ANY` for raw HTTP),
-- core/permissions/rule-scope.ts. This index answers that lookup with the same expressions, so a
-- chain with 10,000 rules costs what the few matching ones cost. It replaces the index by identity
-- alone, whose lookups it also serves (its first column).
CREATE INDEX permission_rules_identity_scope ON permission_rules (identity_id, split_part(pattern, ':', 1), split_part(pattern, ':', 2))
  WHERE revoked_at IS NULL;
DROP INDEX permission_rules_identity;
