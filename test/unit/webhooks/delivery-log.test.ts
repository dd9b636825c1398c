import { describe, expect, it } from 'vitest';
import { groupAttempts, needsWorkflowState, summarize, type AttemptRow } from '../../../core/webhooks/delivery-log.ts';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const row = (event_id: string, attempt: number, status_code: number | null, s: number, error: string | null = status_code !== null && status_code < 300 ? null : 'failed'): AttemptRow => ({
  event_id,
  event_type: 'approval.raised',
  attempt,
  status_code,
  error,
  attempted_at: at(s),
});

describe('the webhook delivery log', () => {
  it('groups attempts by event, newest event first, attempts oldest first', () => {
    const groups = groupAttempts([row('evt_a', 1, 500, 1), row('evt_b', 1, 200, 2), row('evt_a', 2, 200, 3)]);
    expect(groups.map((g) => g[0]!.event_id)).toEqual(['evt_a', 'evt_b']);
    expect(groups[0]!.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('is delivered when the latest attempt got a 2xx, whatever came before', () => {
    const g = [row('evt_a', 1, 500, 1), row('evt_a', 2, 204, 5)];
    expect(needsWorkflowState(g)).toBe(false);
    expect(summarize(g, null)).toEqual({
      event_id: 'evt_a',
      event_type: 'approval.raised',
      state: 'delivered',
      attempts: 2,
      last_status_code: 204,
      last_error: null,
      first_attempt_at: at(1).toISOString(),
      last_attempt_at: at(5).toISOString(),
      next_retry_at: null,
    });
  });

  it('is retrying while the workflow runs (with its next attempt), failed once it stopped or is unknown', () => {
    const g = [row('evt_a', 1, 503, 1)];
    expect(needsWorkflowState(g)).toBe(true);
    expect(summarize(g, { running: true, nextAttemptAt: at(9) })).toMatchObject({ state: 'retrying', next_retry_at: at(9).toISOString(), last_status_code: 503 });
    expect(summarize(g, { running: false, nextAttemptAt: null })).toMatchObject({ state: 'failed', next_retry_at: null });
    expect(summarize([row('evt_a', 1, null, 1, 'network error: ECONNREFUSED')], null)).toMatchObject({ state: 'failed', last_error: 'network error: ECONNREFUSED' });
  });

  it('a redelivery that succeeded after a failed run reads delivered; a failing redelivery after a success reads by its own outcome', () => {
    expect(summarize([row('evt_a', 1, 200, 1), row('evt_a', 1, 500, 4)], { running: true, nextAttemptAt: null }).state).toBe('retrying');
    expect(summarize([row('evt_a', 3, 500, 1), row('evt_a', 1, 200, 4)], null).state).toBe('delivered');
  });
});
