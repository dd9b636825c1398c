// Downloads (binary results of calls): stored by the executor, fetched by whoever may see the call
// that made them.
import type { DatabasePool } from 'slonik';
import { authorityOver } from '../../core/permissions/authority.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { notFound } from '../errors.ts';
import { toChainIdentity, type ChainReader } from '../identities/readers.ts';
import { getDownload, saveDownload, type NewDownload } from './store.ts';

export function createDownloadService(deps: { pool: DatabasePool; identities: ChainReader }) {
  return {
    /** A call's binary result, kept for a short time (the executor's; no principal). */
    save: (d: NewDownload) => saveDownload(deps.pool, d),

    /** The requester, its ancestors and org admins may fetch it until it expires; anyone else: not found. */
    async get(p: Principal, id: string) {
      const d = await getDownload(deps.pool, id);
      if (!d || d.org_id !== p.orgId) throw notFound('download');
      if (d.requester_id) {
        const chain = (await deps.identities.getChain(d.requester_id)).map(toChainIdentity);
        if (!authorityOver({ identityId: p.identityId, admin: isAdmin(p) }, chain).see) throw notFound('download');
      }
      return d;
    },
  };
}

export type DownloadService = ReturnType<typeof createDownloadService>;
