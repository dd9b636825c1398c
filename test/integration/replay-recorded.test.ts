// Call workflow histories recorded by earlier workflow code. Each must replay with the current
// code, or workflows running during an upgrade would fail on the first task after it (patched()
// guards). The first five come from before the crash-safe execution steps and the final-state
// result (issue 11): a covered call, approvals executed on allow and on resume, a deny, an
// execution window that expired. The `v2-` ones come from before decisions, the re-check and the
// final record ran as local activities (issue 14): executed on allow, on resume and with
// allow_always, denied by a person, and two still in flight when recorded (pending; allowed and
// waiting for the resume). The `v3-` ones come from local-steps-v1, before a decision became a
// regular activity recorded after the update's acceptance and before the covered path's send
// mark (issue 24): the same scenarios and a covered call.
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
      'allowed-auto.json',
      'allowed-manual.json',
      'covered.json',
      'denied.json',
      'execution-expired.json',
      'v2-allowed-auto.json',
      'v2-allowed-manual.json',
      'v2-allowed-remember.json',
      'v2-allowed-waiting.json',
      'v2-denied.json',
      'v2-pending.json',
      'v3-allowed-auto.json',
      'v3-allowed-manual.json',
      'v3-allowed-remember.json',
      'v3-allowed-waiting.json',
      'v3-covered.json',
      'v3-denied.json',
      'v3-pending.json',
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
