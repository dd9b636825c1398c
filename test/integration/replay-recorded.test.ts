// Call workflow histories recorded by earlier workflow code, one set per version still supported.
// Each must replay with the current code, or workflows running during an upgrade would fail on
// their first task after it (patched() guards). Versions, and when each can go (docs/decisions.md,
// "Workflow versions"):
// - `v3-`: local-steps-v1 (issue 14), before a decision became a regular activity recorded after the
//   update's acceptance and before the covered path's send mark (issue 24);
// - `v4-`: decision-after-accept-v1 (issue 24), before a deduplicated call followed the approval it
//   joined to its end (shared-outcome-v1, issue 26);
// - `v5-`: shared-outcome-v1 (issue 26), before an auto-call allow was sent in the activity that
//   records it (recorded with `RECORD_HISTORIES=v5 npx vitest run test/integration/calls.test.ts`).
// - `v9-`: the current code, send-on-allow-v1 (issue 28): the same shapes as v5 plus an edited
//   allow (recorded with `RECORD_HISTORIES=v9` and calls.test.ts, then approval-edits.test.ts).
// - `v8-edited-`: edited-request-v1 (issue 31), an approver's edit allowed once and with
//   allow_remember (recorded with `RECORD_HISTORIES=v8 npx vitest run test/integration/approval-edits.test.ts`).
// Each set: a covered call, approvals executed on allow, on resume and with allow_remember, an
// execution window that passed, a deny, a call still pending and (v4 on) a deduplicated call.
// - `v7-notices-`: approval-notices-v1 (issue 30): reminder timers while an approval waits, an
//   escalation, decisions taken in Slack and by email (recorded with
//   `RECORD_HISTORIES=v7-notices npx vitest run test/integration/approval-notices.test.ts`).
// Histories from before local-steps-v1 (v1, v2) are retired: their patches are deprecated.
// - `v6-teams-`: teams-v1 (issue 29), the auto-bubble going on past the user to the approver and the
//   admins (recorded with `RECORD_HISTORIES=v6-teams npx vitest run test/integration/teams.test.ts`).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';

const DIR = path.resolve(import.meta.dirname, '..', 'fixtures', 'histories');

describe('recorded call histories', () => {
  it('replay deterministically with the current workflow code', async () => {
    const files = (await readdir(DIR)).filter((f) => f.endsWith('.json')).sort();
    expect(files).toEqual([
      'v3-allowed-auto.json',
      'v3-allowed-manual.json',
      'v3-allowed-remember.json',
      'v3-allowed-waiting.json',
      'v3-covered.json',
      'v3-denied.json',
      'v3-pending.json',
      'v4-allowed-auto.json',
      'v4-allowed-manual.json',
      'v4-allowed-remember.json',
      'v4-covered.json',
      'v4-denied.json',
      'v4-execution-expired.json',
      'v4-joined.json',
      'v4-pending.json',
      'v5-allowed-auto.json',
      'v5-allowed-manual.json',
      'v5-allowed-remember.json',
      'v5-covered.json',
      'v5-denied.json',
      'v5-execution-expired.json',
      'v5-joined.json',
      'v5-pending.json',
      'v6-teams-auto-bubble-past-user.json',
      'v7-notices-email-denied.json',
      'v7-notices-reminded-escalated.json',
      'v7-notices-slack-allowed.json',
      'v8-edited-allowed-once.json',
      'v8-edited-remember.json',
      'v9-allowed-auto.json',
      'v9-allowed-manual.json',
      'v9-allowed-remember.json',
      'v9-covered.json',
      'v9-denied.json',
      'v9-edited-allowed-once.json',
      'v9-edited-remember.json',
      'v9-execution-expired.json',
      'v9-joined.json',
      'v9-pending.json',
    ]);
    const histories = (async function* () {
      // The SDK's own JSON reader trips over a second protobufjs copy under vitest: decode here.
      for (const f of files) yield { workflowId: f, history: temporal.api.history.v1.History.fromObject(JSON.parse(await readFile(path.join(DIR, f), 'utf8'))) };
    })();
    const replayed: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') } }, histories)) {
      expect(result.error, `${result.workflowId}: ${String(result.error)}`).toBeUndefined();
      replayed.push(result.workflowId);
    }
    expect(replayed).toEqual(files);
  });
});
