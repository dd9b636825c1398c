// The vault: org-scoped secrets with a version history. Each method: authorize → load/validate →
// transaction. Values go in through `put` and come out only through `resolveSecretValue` (for the
// executor); no method that serves the REST API ever returns, logs or otherwise echoes plaintext.
//
// Who may manage it: every person of the org (admins and members alike); agents never. A secret is
// the org's (usable by every user of the org and their agents) or one user's own (`scope: user`:
// seen, managed and usable by that user, their agents and org admins; another member's calls
// cannot inject it). Values are write-only through the API: nobody can read one back. Agents only
// ever reach a secret indirectly, by a call the gateway executes for them. `allowed_hosts` says
// where raw HTTP may inject it (core/vault/hosts.ts); without a list only service templates may.
import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { secretAad } from '../../core/vault/envelope.ts';
import { checkHostPattern } from '../../core/vault/hosts.ts';
import { isAdmin, type Principal, type UserPrincipal } from '../auth/principal.ts';
import { conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import type { VaultKeyring } from './keyring.ts';
import * as store from './store.ts';

export interface PutSecretInput {
  name: string;
  value: string;
  description?: string | undefined;
  /** Set at create; on rotate undefined keeps the list, null clears it (templates only). */
  allowed_hosts?: string[] | null | undefined;
  /** `org` (default) or `user` (the caller's own); fixed at create. */
  scope?: 'org' | 'user' | undefined;
}

/** A secret's value with what binds it (hosts, owner): what a template's credential needs. */
export interface ResolvedSecret {
  value: string;
  allowedHosts: string[] | null;
  ownerId: string | null;
}

/** The metadata a call needs to decide whether a secret may be injected (never the value). */
export interface SecretUse {
  id: string;
  name: string;
  allowedHosts: string[] | null;
  ownerId: string | null;
}

function normaliseHosts(hosts: readonly string[] | null | undefined): string[] | null | undefined {
  if (hosts === undefined || hosts === null) return hosts;
  const out: string[] = [];
  for (const h of hosts) {
    const c = checkHostPattern(h);
    if (!c.ok) throw invalidRequest(`allowed_hosts: ${c.reason}`, { field: 'allowed_hosts' });
    if (!out.includes(c.value)) out.push(c.value);
  }
  return out;
}

/** Whose calls may use a secret: the org's are everyone's in the org, a user's own only that user's chains. */
export const usableBy = (s: { owner_id: string | null }, userId: string): boolean => s.owner_id === null || s.owner_id === userId;

export function publicSecret(s: store.SecretRow) {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    current_version: s.current_version,
    scope: s.owner_id === null ? 'org' : 'user',
    owner_id: s.owner_id,
    allowed_hosts: s.allowed_hosts,
    created_by: s.created_by,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}

export function publicVersion(v: store.VersionRow) {
  return {
    version: v.version,
    created_at: v.created_at.toISOString(),
    created_by: v.created_by,
    restored_from: v.restored_from,
    kek_id: v.kek_id,
  };
}

function assertHuman(p: Principal): asserts p is UserPrincipal {
  if (p.type !== 'user') throw forbidden('the vault is managed by people signed in to the dashboard, not by agents');
}

export function createVaultService(deps: { pool: DatabasePool; keyring: VaultKeyring }) {
  const { pool, keyring } = deps;

  /** Seals `value` as the next version of a locked secret row and records it. */
  async function addVersion(
    tx: DatabaseTransactionConnection,
    secret: store.SecretRow,
    value: string | Buffer,
    opts: { description: string | undefined; restoredFrom: number | null; createdBy: string; allowedHosts?: string[] | null | undefined },
  ): Promise<store.SecretRow> {
    const bumped = await store.bumpVersion(tx, secret.id, opts.description, opts.allowedHosts);
    const envelope = keyring.encrypt(value, secretAad(secret.org_id, secret.id, bumped.current_version));
    await store.insertVersion(tx, {
      secretId: secret.id,
      version: bumped.current_version,
      envelope,
      restoredFrom: opts.restoredFrom,
      createdBy: opts.createdBy,
      // The hosts in force for this value: a restore of this version restores them.
      allowedHosts: bumped.allowed_hosts,
    });
    return bumped;
  }

  /** Admins see every secret of the org; members the org's and their own (others' answer 404). */
  const visibleTo = (p: UserPrincipal, s: store.SecretRow) => isAdmin(p) || usableBy(s, p.userId);

  /** An org secret (its value, its hosts, its existence) is changed by org admins only; a user's own by its owner or an admin. */
  function assertMayChange(p: UserPrincipal, s: store.SecretRow): void {
    if (s.owner_id === null && !isAdmin(p)) throw forbidden(`secret "${s.name}" belongs to the organisation: only an org admin may rotate, restore or delete it`);
  }

  /**
   * The current value of a live secret usable by `userId`'s chains (org-level callers pass no
   * user), with its allowed_hosts and owner, or null. The plaintext is handed to the caller only;
   * nothing here logs or stores it.
   */
  async function resolveSecret(orgId: string, name: string, userId?: string): Promise<ResolvedSecret | null> {
    return openCurrent(await store.currentEnvelopeByName(pool, orgId, name), userId);
  }

  /** A current envelope already read (by this module's query, or its JSON form unparsed): its value for `userId`'s chains, or null. */
  function openCurrent(read: store.CurrentEnvelope | unknown, userId?: string): ResolvedSecret | null {
    const current = store.parseCurrentEnvelope(read);
    if (!current) return null;
    // A user's own secret serves only that user's chains.
    if (userId !== undefined ? !usableBy(current, userId) : current.owner_id !== null) return null;
    const plaintext = keyring.decrypt(current.envelope, secretAad(current.org_id, current.secret_id, current.version));
    try {
      return { value: plaintext.toString('utf8'), allowedHosts: current.allowed_hosts, ownerId: current.owner_id };
    } finally {
      plaintext.fill(0);
    }
  }

  async function loadSecret(p: UserPrincipal, id: string): Promise<store.SecretRow> {
    const row = await store.getSecret(pool, p.orgId, id);
    if (!row || !visibleTo(p, row)) throw notFound('secret');
    return row;
  }

  return {
    /** A new name creates the secret at version 1; an existing live name rotates it. */
    async put(p: Principal, input: PutSecretInput): Promise<{ created: boolean; secret: ReturnType<typeof publicSecret> }> {
      assertHuman(p);
      const allowedHosts = normaliseHosts(input.allowed_hosts);
      return pool.transaction(async (tx) => {
        const opts = { description: input.description, restoredFrom: null, createdBy: p.identityId, allowedHosts };
        let existing = await store.findSecretByName(tx, p.orgId, input.name, true);
        if (!existing) {
          const inserted = await store.insertSecret(tx, {
            orgId: p.orgId,
            name: input.name,
            description: input.description ?? null,
            createdBy: p.identityId,
            allowedHosts: allowedHosts ?? null,
            ownerId: input.scope === 'user' ? p.userId : null,
          });
          if (inserted) return { created: true, secret: publicSecret(await addVersion(tx, inserted, input.value, opts)) };
          // A concurrent request created it first (the insert waited for it): rotate that one.
          existing = await store.findSecretByName(tx, p.orgId, input.name, true);
          if (!existing) throw notFound('secret');
        }
        if (!visibleTo(p, existing)) throw conflict('a secret of this name belongs to another member; choose another name');
        assertMayChange(p, existing);
        if (input.scope !== undefined && input.scope !== (existing.owner_id === null ? 'org' : 'user')) {
          throw invalidRequest("the scope of an existing secret cannot change: delete it and create it again", { field: 'scope' });
        }
        return { created: false, secret: publicSecret(await addVersion(tx, existing, input.value, opts)) };
      });
    },

    async list(p: Principal) {
      assertHuman(p);
      return (await store.listSecrets(pool, p.orgId)).filter((s) => visibleTo(p, s)).map(publicSecret);
    },

    async get(p: Principal, id: string) {
      assertHuman(p);
      return publicSecret(await loadSecret(p, id));
    },

    async listVersions(p: Principal, id: string) {
      assertHuman(p);
      const secret = await loadSecret(p, id);
      return (await store.listVersions(pool, secret.id)).map(publicVersion);
    },

    /** Re-seals an older version's value as a new current version (history is append-only). */
    async restore(p: Principal, id: string, version: number) {
      assertHuman(p);
      return pool.transaction(async (tx) => {
        const secret = await store.getSecret(tx, p.orgId, id, true);
        if (!secret || !visibleTo(p, secret)) throw notFound('secret');
        assertMayChange(p, secret);
        const source = await store.getVersion(tx, secret.id, version);
        if (!source) throw notFound('secret version');
        const plaintext = keyring.decrypt(source.envelope, secretAad(secret.org_id, secret.id, source.version));
        try {
          // The value comes back with the hosts it was trusted for, never under a newer, wider list.
          const updated = await addVersion(tx, secret, plaintext, {
            description: undefined,
            restoredFrom: source.version,
            createdBy: p.identityId,
            allowedHosts: source.allowed_hosts,
          });
          return publicSecret(updated);
        } finally {
          plaintext.fill(0);
        }
      });
    },

    async remove(p: Principal, id: string): Promise<void> {
      assertHuman(p);
      assertMayChange(p, await loadSecret(p, id));
      if (!(await store.softDelete(pool, p.orgId, id))) throw notFound('secret');
    },

    /**
     * For the call service and the executor: the metadata of a live secret that calls of `userId`'s
     * chains may use (the org's or that user's own), or null — another member's secret is null too.
     */
    async secretForUse(orgId: string, name: string, userId: string): Promise<SecretUse | null> {
      const s = await store.findSecretByName(pool, orgId, name);
      if (!s || s.current_version < 1 || !usableBy(s, userId)) return null;
      return { id: s.id, name: s.name, allowedHosts: s.allowed_hosts, ownerId: s.owner_id };
    },

    /**
     * For the executor: the current value of a live secret of the org, or null when there is none.
     * The plaintext is handed to the caller only; nothing here logs or stores it.
     */
    async resolveSecretValue(orgId: string, name: string, userId?: string): Promise<string | null> {
      return (await resolveSecret(orgId, name, userId))?.value ?? null;
    },

    /** The value with what binds it (hosts, owner), in one round trip: a template's credential. */
    resolveSecret,

    /** The same, from an envelope read inside another statement (`store.currentEnvelopeJson`). */
    openCurrent,
  };
}

export type VaultService = ReturnType<typeof createVaultService>;
