// node-oidc-provider's storage in PostgreSQL: every model in the one `oidc_payloads` table, so any
// replica can continue what another started (interactions, codes, refresh tokens, sessions).
//
// `consume` is atomic: of two requests presenting the same authorization code or refresh token
// at once, exactly one consumes it; the other is a replay and revokes the whole grant (codes,
// refresh tokens, the grant itself), the same answer oidc-provider gives to a sequential reuse.
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { isStorableText } from '../../core/text/storable.ts';
import * as store from './store.ts';

/** Models whose rows carry a grant id (revoked together with their grant). */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
/** Models consumed once; a second consumption is a replay. */
const SINGLE_USE = new Set(['AuthorizationCode', 'RefreshToken']);

const PURGE_INTERVAL_MS = 10 * 60_000;

function toPayload(row: store.PayloadRow): AdapterPayload {
  return { ...row.payload, ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}) };
}

export function createPostgresAdapter(pool: DatabasePool, opts: { onPurgeError?: (err: unknown) => void } = {}) {
  let lastPurge = 0;
  const maybePurge = () => {
    if (Date.now() - lastPurge < PURGE_INTERVAL_MS) return;
    lastPurge = Date.now();
    store.purgeExpired(pool).catch((err: unknown) => opts.onPurgeError?.(err));
  };

  return function adapterFor(type: string): Adapter {
    const findBy = async (column: 'id' | 'uid' | 'user_code', value: string) => {
      // Nothing stored can match text PostgreSQL refuses (a client_id with NUL): not found, not a 500.
      if (typeof value !== 'string' || !isStorableText(value)) return undefined;
      const row = await store.findPayload(pool, type, column, value);
      return row ? toPayload(row) : undefined;
    };

    return {
      async upsert(id, payload, expiresIn) {
        await store.upsertPayload(pool, {
          type,
          id,
          payload,
          grantId: GRANTABLE.has(type) ? (payload.grantId ?? null) : null,
          userCode: payload.userCode ?? null,
          uid: payload.uid ?? null,
          expiresIn: typeof expiresIn === 'number' ? expiresIn : undefined,
        });
        maybePurge();
      },

      find: (id) => findBy('id', id),
      findByUid: (uid) => findBy('uid', uid),
      findByUserCode: (userCode) => findBy('user_code', userCode),

      async consume(id) {
        if ((await store.consumePayload(pool, type, id)) || !SINGLE_USE.has(type)) return;
        // Lost a race with another consumption of the same code or token: a replay.
        const grantId = await store.payloadGrantId(pool, type, id);
        if (grantId) await store.destroyGrant(pool, grantId);
        throw new errors.InvalidGrant(`${type === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
      },

      async destroy(id) {
        if (!isStorableText(id)) return;
        await store.destroyPayload(pool, type, id);
      },

      async revokeByGrantId(grantId) {
        await store.destroyPayloadsOfGrant(pool, type, grantId);
      },
    };
  };
}
