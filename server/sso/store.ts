// SQL for single sign-on (issue 29): an org's OpenID Connect configuration, the sign-ins under way
// (state, nonce, PKCE verifier; single use) and the provider subjects people signed in as.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

type Db = CommonQueryMethods;

export const ssoConfigRow = z.object({
  org_id: z.string(),
  issuer: z.string(),
  client_id: z.string(),
  client_secret_id: z.string(),
  allowed_domains: z.array(z.string()),
  jit: z.boolean(),
  display_name: z.string(),
  password_signin: z.boolean(),
  verified_at: z.date().nullable(),
  updated_at: z.date(),
});
export type SsoConfigRow = z.infer<typeof ssoConfigRow>;

export const getConfig = (db: Db, orgId: string) => db.maybeOne(sql.type(ssoConfigRow)`SELECT * FROM sso_configs WHERE org_id = ${orgId}`);

/** Every org's sign-in button (the sign-in page lists them). */
export const listButtons = (db: Db) =>
  db.any(sql.type(z.object({ org_id: z.string(), display_name: z.string() }))`SELECT org_id, display_name FROM sso_configs ORDER BY display_name`);

export interface ConfigWrite {
  orgId: string;
  issuer: string;
  clientId: string;
  clientSecretId: string;
  allowedDomains: string[];
  jit: boolean;
  displayName: string;
  passwordSignin: boolean;
  /** A new provider or client: it has to prove itself again before password sign-in can go. */
  resetVerified: boolean;
  by: string;
}

export const putConfig = (db: Db, c: ConfigWrite) =>
  db.one(sql.type(ssoConfigRow)`
    INSERT INTO sso_configs (org_id, issuer, client_id, client_secret_id, allowed_domains, jit, display_name, password_signin, updated_by, verified_at)
    VALUES (${c.orgId}, ${c.issuer}, ${c.clientId}, ${c.clientSecretId}, ${sql.array(c.allowedDomains, 'text')}, ${c.jit}, ${c.displayName}, ${c.passwordSignin}, ${c.by},
      -- The proposed row is checked before the conflict is: it carries the verification it keeps.
      (SELECT verified_at FROM sso_configs WHERE org_id = ${c.orgId} AND NOT ${c.resetVerified}))
    ON CONFLICT (org_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id, client_secret_id = EXCLUDED.client_secret_id,
      allowed_domains = EXCLUDED.allowed_domains, jit = EXCLUDED.jit, display_name = EXCLUDED.display_name,
      password_signin = EXCLUDED.password_signin, updated_by = EXCLUDED.updated_by, updated_at = now(),
      verified_at = EXCLUDED.verified_at
    RETURNING *`);

/** Of `domains`, those another org's single sign-on has claimed (their names only: never which org). */
export const domainsClaimedElsewhere = (db: Db, orgId: string, domains: readonly string[]) =>
  db.anyFirst(sql.type(z.object({ domain: z.string() }))`
    SELECT domain FROM sso_domain_claims WHERE domain = ANY(${sql.array(domains, 'text')}) AND org_id <> ${orgId} ORDER BY domain`);

/**
 * Makes `domains` exactly the org's claims, inside the caller's transaction: claims it no longer
 * lists are released, new ones taken unless another org holds them (the primary key decides any
 * race). Answers the domains another org holds (then the caller rolls back).
 */
export async function claimDomains(tx: Db, orgId: string, domains: readonly string[]): Promise<readonly string[]> {
  await tx.query(sql.unsafe`DELETE FROM sso_domain_claims WHERE org_id = ${orgId} AND NOT (domain = ANY(${sql.array(domains, 'text')}))`);
  await tx.query(sql.unsafe`
    INSERT INTO sso_domain_claims (domain, org_id) SELECT unnest(${sql.array(domains, 'text')}), ${orgId}
    ON CONFLICT (domain) DO NOTHING`);
  return domainsClaimedElsewhere(tx, orgId, domains);
}

export async function markVerified(db: Db, orgId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE sso_configs SET verified_at = COALESCE(verified_at, now()) WHERE org_id = ${orgId}`);
}

/** Whether people of this org may sign in with a password (true without SSO). */
export const passwordSigninAllowed = (db: Db, orgId: string) =>
  db.maybeOneFirst(sql.type(z.object({ password_signin: z.boolean() }))`SELECT password_signin FROM sso_configs WHERE org_id = ${orgId}`);

export async function startLogin(
  db: Db,
  l: { stateHash: Buffer; browserHash: Buffer; orgId: string; nonce: string; codeVerifier: string; invitationId: string | null; ttlSeconds: number },
): Promise<void> {
  // Starting is open to anyone: sign-ins that ended a day ago go as new ones come.
  await db.query(sql.unsafe`
    WITH pruned AS (DELETE FROM sso_logins WHERE expires_at < now() - interval '1 day')
    INSERT INTO sso_logins (state_hash, browser_hash, org_id, nonce, code_verifier, invitation_id, expires_at)
    VALUES (${sql.binary(l.stateHash)}, ${sql.binary(l.browserHash)}, ${l.orgId}, ${l.nonce}, ${l.codeVerifier}, ${l.invitationId}, now() + make_interval(secs => ${l.ttlSeconds}))`);
}

const loginRow = z.object({ org_id: z.string(), nonce: z.string(), code_verifier: z.string(), invitation_id: z.string().nullable(), browser_hash: z.instanceof(Buffer) });

/** Takes the sign-in its state names: once, before it expires. Null: unknown, used (a replay) or expired. */
export const takeLogin = (db: Db, stateHash: Buffer) =>
  db.maybeOne(sql.type(loginRow)`
    UPDATE sso_logins SET used_at = now()
    WHERE state_hash = ${sql.binary(stateHash)} AND used_at IS NULL AND expires_at > now()
    RETURNING org_id, nonce, code_verifier, invitation_id, browser_hash`);

export const userOfSubject = (db: Db, issuer: string, subject: string) =>
  db.maybeOneFirst(sql.type(z.object({ user_id: z.string() }))`SELECT user_id FROM sso_subjects WHERE issuer = ${issuer} AND subject = ${subject}`);

export async function linkSubject(db: Db, issuer: string, subject: string, userId: string): Promise<void> {
  await db.query(sql.unsafe`INSERT INTO sso_subjects (issuer, subject, user_id) VALUES (${issuer}, ${subject}, ${userId}) ON CONFLICT DO NOTHING`);
}

export const userById = (db: Db, id: string) =>
  db.maybeOne(sql.type(z.object({ id: z.string(), org_id: z.string(), status: z.string(), email: z.string() }))`
    SELECT id, org_id, status, email FROM identities WHERE id = ${id} AND kind = 'user'`);

export const userByEmailInOrg = (db: Db, orgId: string, email: string) =>
  db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM identities WHERE kind = 'user' AND org_id = ${orgId} AND lower(email) = lower(${email})`);
