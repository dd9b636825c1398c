// The live count behind the Approvals badge: approvals I can act on, refreshed on every event.
import { listApprovals } from './api.ts';
import { events } from './events.svelte.ts';

class PendingCount {
  count = $state<number | null>(null);
  private off: (() => void) | null = null;

  start(): void {
    if (this.off) return;
    void this.refresh();
    this.off = events.on(() => void this.refresh());
  }

  stop(): void {
    this.off?.();
    this.off = null;
    this.count = null;
  }

  async refresh(): Promise<void> {
    try {
      this.count = (await listApprovals({ scope: 'actionable' })).length;
    } catch {
      /* keep the last count; the shell shows the stream as offline */
    }
  }
}

export const pending = new PendingCount();
