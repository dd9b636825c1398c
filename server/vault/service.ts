// The vault: org-scoped secrets with a version history. Each method: authorize → load/validate →
// transaction. Values go in through `put` and come out only through `resolveSecretValue` (for the
// executor); no method that serves the REST API ever returns, logs or otherwise echoes plaintext.
//
// Who may use it: every person of the org (admins and members alike); agents never. The vault is
// shared by the org because what reads it is org-wide too (service API keys, OAuth app client
// secrets), and values are write-only through the API, so a member can add, rotate, restore or
// delete a secret but can never read one back. Agents only ever reach a secret indirectly, by a
// call the gateway executes for them.
import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { secretAad } from '../../core/vault/envelope.ts';
import type { Principal, UserPrincipal } from '../auth/principal.ts';
import { forbidden, notFound } from '../errors.ts';
import type { VaultKeyring } from './keyring.ts';
import * as store from './store.ts';

export interface PutSecretInput {
  name: string;
  value: string;
  description?: string | undefined;
}

export function publicSecret(s: store.SecretRow) {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    current_version: s.current_version,
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
    opts: { description: string | undefined; restoredFrom: number | null; createdBy: string },
  ): Promise<store.SecretRow> {
    const bumped = await store.bumpVersion(tx, secret.id, opts.description);
    const envelope = keyring.encrypt(value, secretAad(secret.org_id, secret.id, bumped.current_version));
    await store.insertVersion(tx, {
      secretId: secret.id,
      version: bumped.current_version,
      envelope,
      restoredFrom: opts.restoredFrom,
      createdBy: opts.createdBy,
    });
    return bumped;
  }

  async function loadSecret(p: UserPrincipal, id: string): Promise<store.SecretRow> {
    const row = await store.getSecret(pool, p.orgId, id);
    if (!row) throw notFound('secret');
    return row;
  }

  return {
    /** A new name creates the secret at version 1; an existing live name rotates it. */
    async put(p: Principal, input: PutSecretInput): Promise<{ created: boolean; secret: ReturnType<typeof publicSecret> }> {
      assertHuman(p);
      return pool.transaction(async (tx) => {
        const opts = { description: input.description, restoredFrom: null, createdBy: p.identityId };
        let existing = await store.findSecretByName(tx, p.orgId, input.name, true);
        if (!existing) {
          const inserted = await store.insertSecret(tx, {
            orgId: p.orgId,
            name: input.name,
            description: input.description ?? null,
            createdBy: p.identityId,
          });
          if (inserted) return { created: true, secret: publicSecret(await addVersion(tx, inserted, input.value, opts)) };
          // A concurrent request created it first (the insert waited for it): rotate that one.
          existing = await store.findSecretByName(tx, p.orgId, input.name, true);
          if (!existing) throw notFound('secret');
        }
        return { created: false, secret: publicSecret(await addVersion(tx, existing, input.value, opts)) };
      });
    },

    async list(p: Principal) {
      assertHuman(p);
      return (await store.listSecrets(pool, p.orgId)).map(publicSecret);
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
        if (!secret) throw notFound('secret');
        const source = await store.getVersion(tx, secret.id, version);
        if (!source) throw notFound('secret version');
        const plaintext = keyring.decrypt(source.envelope, secretAad(secret.org_id, secret.id, source.version));
        try {
          const updated = await addVersion(tx, secret, plaintext, {
            description: undefined,
            restoredFrom: source.version,
            createdBy: p.identityId,
          });
          return publicSecret(updated);
        } finally {
          plaintext.fill(0);
        }
      });
    },

    async remove(p: Principal, id: string): Promise<void> {
      assertHuman(p);
      if (!(await store.softDelete(pool, p.orgId, id))) throw notFound('secret');
    },

    /**
     * For the executor: the current value of a live secret of the org, or null when there is none.
     * The plaintext is handed to the caller only; nothing here logs or stores it.
     */
    async resolveSecretValue(orgId: string, name: string): Promise<string | null> {
      const current = await store.currentEnvelopeByName(pool, orgId, name);
      if (!current) return null;
      const plaintext = keyring.decrypt(current.envelope, secretAad(current.org_id, current.secret_id, current.version));
      try {
        return plaintext.toString('utf8');
      } finally {
        plaintext.fill(0);
      }
    },
  };
}

export type VaultService = ReturnType<typeof createVaultService>;
