// Call workflow histories recorded by the current workflow code, one per shape a call can take.
// Before the first tagged release there is one workflow version and no patch (docs/decisions.md,
// "One workflow version"): these are re-recorded whenever the workflow's shape changes, with
//   RECORD_HISTORIES=current npx vitest run test/integration/calls.test.ts \
//     test/integration/approval-edits.test.ts test/integration/approval-notices.test.ts test/integration/teams.test.ts
// From the first release on, every change is patched and these files are kept: each must replay
// with the new code, or workflows running during an upgrade would fail on their next task.
// The shapes: a covered call; approvals executed on allow, on resume and with allow_remember; an
// execution window that passed; a deny; a call still pending; a deduplicated call that joined
// another's approval; an approver's edit allowed once and remembered; reminder timers with an
// escalation, decisions in Slack and by email; the auto-bubble past the user.
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
      'current-allowed-auto.json',
      'current-allowed-manual.json',
      'current-allowed-remember.json',
      'current-auto-bubble-past-user.json',
      'current-covered.json',
      'current-denied.json',
      'current-edited-allowed-once.json',
      'current-edited-remember.json',
      'current-email-denied.json',
      'current-execution-expired.json',
      'current-joined.json',
      'current-pending.json',
      'current-reminded-escalated.json',
      'current-slack-allowed.json',
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
