// Names for ids: every identity the viewer may see (their tree; the org for admins), so the
// dashboard shows "alice › assistant › helper" instead of UUIDs.
import { listIdentities, type Identity } from './api.ts';

class Directory {
  byId = $state<Record<string, Identity>>({});
  private loading: Promise<void> | null = null;

  async refresh(): Promise<void> {
    const list = await listIdentities();
    this.byId = Object.fromEntries(list.map((i) => [i.id, i]));
  }

  reset(): void {
    this.byId = {};
    this.loading = null;
  }

  /** Loads once; call refresh() after changes. */
  ensure(): Promise<void> {
    return (this.loading ??= this.refresh().catch((err: unknown) => {
      this.loading = null;
      throw err;
    }));
  }

  name(id: string | null | undefined): string {
    if (!id) return 'unknown';
    return this.byId[id]?.name ?? 'an identity outside your view';
  }

  /** The chain user-first: [user, agent, subagent]. */
  path(id: string): Identity[] {
    const out: Identity[] = [];
    let cur: Identity | undefined = this.byId[id];
    while (cur && out.length < 64) {
      out.unshift(cur);
      cur = cur.parent_id ? this.byId[cur.parent_id] : undefined;
    }
    return out;
  }
}

export const directory = new Directory();
