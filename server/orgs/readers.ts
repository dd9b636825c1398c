// What other features read of orgs, bound to the pool and handed to them by the composition root
// (server/services.ts) instead of the store module. No authorization here.
import type { DatabasePool } from 'slonik';
import * as store from './store.ts';

export type { OrgRow } from './store.ts';

export function createOrgReader(pool: DatabasePool) {
  return {
    getOrg: (id: string) => store.getOrg(pool, id),
  };
}

export type OrgReader = ReturnType<typeof createOrgReader>;
