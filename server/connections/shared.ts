// What the three connection modules (oauth-apps.ts, authorization.ts, tokens.ts) share: their
// dependencies, the vault envelopes a connection's secrets are sealed in, who may see a
// connection, and the metadata it is shown as.
import type { DatabasePool } from 'slonik';
import type { Envelope } from '../../core/vault/envelope.ts';
import { isAdmin, type Principal, type UserPrincipal } from '../auth/principal.ts';
import { forbidden, notFound } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import type { VaultService } from '../vault/service.ts';
import type * as oauth from './oauth-client.ts';
import * as store from './store.ts';

export interface ConnectionServiceDeps {
  pool: DatabasePool;
  keyring: VaultKeyring;
  /** The OAuth app client secret lives in the vault as `oauth_app.<provider>.client_secret`. */
  vault: Pick<VaultService, 'put' | 'resolveSecretValue'>;
  /** The gateway's public base URL: the provider redirects the browser to `${publicUrl}/v1/connections/callback`. */
  publicUrl: string;
  logger: Logger;
  refreshMarginSeconds?: number;
  /** Timeouts and fetch for the provider requests (tests). */
  oauthRequest?: oauth.RequestOptions;
}

type SealedColumn = 'access_token' | 'refresh_token' | 'pkce_verifier';

const aad = (connectionId: string, column: SealedColumn) => `connection:${connectionId}:${column}`;

/** Seals and opens a connection's secrets; each envelope is bound (AAD) to its row and column. */
export function connectionSecrets(keyring: VaultKeyring) {
  const seal = (connectionId: string, column: SealedColumn, value: string): Envelope => keyring.encrypt(value, aad(connectionId, column));

  function open(connectionId: string, column: SealedColumn, envelope: Envelope): string {
    const plaintext = keyring.decrypt(envelope, aad(connectionId, column));
    try {
      return plaintext.toString('utf8');
    } finally {
      plaintext.fill(0);
    }
  }

  return { seal, open };
}

export const expiryOf = (t: oauth.TokenSet) => (t.expiresIn === null ? null : new Date(Date.now() + t.expiresIn * 1000));

/** Metadata only: never a token, a verifier or a state. */
export function publicConnection(c: store.ConnectionRow) {
  return {
    id: c.id,
    name: c.name,
    provider: c.provider,
    template: c.template,
    status: c.status,
    owner_id: c.owner_id,
    requested_scopes: c.requested_scopes,
    granted_scopes: c.granted_scopes,
    account_id: c.account_id,
    account_name: c.account_name,
    token_expires_at: c.token_expires_at?.toISOString() ?? null,
    refresh_count: c.refresh_count,
    last_refreshed_at: c.last_refreshed_at?.toISOString() ?? null,
    last_error: c.last_error,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}

export type PublicConnection = ReturnType<typeof publicConnection>;

/** The connection if the principal may see it; 404 otherwise, so ids of others never leak. */
export async function loadVisible(pool: DatabasePool, p: Principal, id: string): Promise<store.ConnectionRow> {
  const row = await store.getConnection(pool, id);
  if (!row || row.org_id !== p.orgId) throw notFound('connection');
  if (isAdmin(p) || row.owner_id === p.userId) return row;
  throw notFound('connection');
}

export function requirePerson(p: Principal, what: string): UserPrincipal {
  if (p.type !== 'user') throw forbidden(`agents cannot ${what}; a person signed in to the dashboard must`);
  return p;
}
