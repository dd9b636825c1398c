// node-oidc-provider's storage in PostgreSQL: every model in the one `oidc_payloads` table, so any
// replica can continue what another started (interactions, codes, refresh tokens, sessions).
//
// `consume` is atomic: of two requests presenting the same authorization code or refresh token
// at once, exactly one consumes it; the other is a replay and revokes the whole grant (codes,
// refresh tokens, the grant itself), the same answer oidc-provider gives to a sequential reuse.
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { isStorableText } from '../../core/text/storable.ts';
import { purgeExpired } from './store.ts';

const payloadRow = z.object({ payload: z.record(z.string(), z.unknown()), consumed_at: z.date().nullable() });

/** Models whose rows carry a grant id (revoked together with their grant). */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
/** Models consumed once; a second consumption is a replay. */
const SINGLE_USE = new Set(['AuthorizationCode', 'RefreshToken']);

const PURGE_INTERVAL_MS = 10 * 60_000;

function toPayload(row: z.infer<typeof payloadRow>): AdapterPayload {
  return { ...row.payload, ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}) };
}

/** Revokes a grant the way oidc-provider's own `revoke` helper does, across every model. */
export async function destroyGrant(pool: DatabasePool, grantId: string): Promise<void> {
  await pool.query(sql.unsafe`
    DELETE FROM oidc_payloads WHERE grant_id = ${grantId} OR (type = 'Grant' AND id = ${grantId})`);
}

export function createPostgresAdapter(pool: DatabasePool, opts: { onPurgeError?: (err: unknown) => void } = {}) {
  let lastPurge = 0;
  const maybePurge = () => {
    if (Date.now() - lastPurge < PURGE_INTERVAL_MS) return;
    lastPurge = Date.now();
    purgeExpired(pool).catch((err: unknown) => opts.onPurgeError?.(err));
  };

  return function adapterFor(type: string): Adapter {
    const findBy = async (column: 'id' | 'uid' | 'user_code', value: string) => {
      // Nothing stored can match text PostgreSQL refuses (a client_id with NUL): not found, not a 500.
      if (typeof value !== 'string' || !isStorableText(value)) return undefined;
      const row = await pool.maybeOne(sql.type(payloadRow)`
        SELECT payload, consumed_at FROM oidc_payloads
        WHERE type = ${type} AND ${sql.identifier([column])} = ${value} AND (expires_at IS NULL OR expires_at > now())
        LIMIT 1`);
      return row ? toPayload(row) : undefined;
    };

    return {
      async upsert(id, payload, expiresIn) {
        const expiresAt = typeof expiresIn === 'number' ? sql.fragment`now() + make_interval(secs => ${expiresIn})` : sql.fragment`NULL`;
        await pool.query(sql.unsafe`
          INSERT INTO oidc_payloads (id, type, payload, grant_id, user_code, uid, expires_at)
          VALUES (${id}, ${type}, ${sql.jsonb(payload as never)}, ${GRANTABLE.has(type) ? (payload.grantId ?? null) : null},
                  ${payload.userCode ?? null}, ${payload.uid ?? null}, ${expiresAt})
          ON CONFLICT (type, id) DO UPDATE SET
            payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, user_code = EXCLUDED.user_code,
            uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`);
        maybePurge();
      },

      find: (id) => findBy('id', id),
      findByUid: (uid) => findBy('uid', uid),
      findByUserCode: (userCode) => findBy('user_code', userCode),

      async consume(id) {
        const consumed = await pool.maybeOne(sql.type(z.object({ id: z.string() }))`
          UPDATE oidc_payloads SET consumed_at = now()
          WHERE type = ${type} AND id = ${id} AND consumed_at IS NULL
          RETURNING id`);
        if (consumed || !SINGLE_USE.has(type)) return;
        // Lost a race with another consumption of the same code or token: a replay.
        const grantId = await pool.maybeOneFirst(sql.type(z.object({ grant_id: z.string().nullable() }))`
          SELECT grant_id FROM oidc_payloads WHERE type = ${type} AND id = ${id}`);
        if (grantId) await destroyGrant(pool, grantId);
        throw new errors.InvalidGrant(`${type === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
      },

      async destroy(id) {
        if (!isStorableText(id)) return;
        await pool.query(sql.unsafe`DELETE FROM oidc_payloads WHERE type = ${type} AND id = ${id}`);
      },

      async revokeByGrantId(grantId) {
        await pool.query(sql.unsafe`DELETE FROM oidc_payloads WHERE type = ${type} AND grant_id = ${grantId}`);
      },
    };
  };
}
