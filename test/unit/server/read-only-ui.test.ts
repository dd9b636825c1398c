import { describe, expect, it } from 'vitest';
import { readOnlyAllows, readOnlySettings } from '../../../server/embedded/read-only-ui.ts';
import { listeningInodes } from '../../../server/embedded/processes.ts';

describe('read-only Temporal UI rules', () => {
  it('lets reads and workflow queries through, nothing else', () => {
    expect(readOnlyAllows('GET', '/api/v1/namespaces/default/workflows?query=')).toBe(true);
    expect(readOnlyAllows('HEAD', '/')).toBe(true);
    expect(readOnlyAllows('POST', '/api/v1/namespaces/default/workflows/wf-1/query/__stack_trace')).toBe(true);
    expect(readOnlyAllows('POST', '/api/v1/namespaces/default/workflows/wf-1/terminate')).toBe(false);
    expect(readOnlyAllows('POST', '/api/v1/namespaces/default/workflows/wf-1/signal/decision')).toBe(false);
    expect(readOnlyAllows('POST', '/api/v1/namespaces/default/workflows/wf-1/update/decide')).toBe(false);
    expect(readOnlyAllows('PUT', '/api/v1/namespaces/default/workflows/wf-1/query/x')).toBe(false);
    expect(readOnlyAllows('DELETE', '/api/v1/namespaces/default/workflows/wf-1')).toBe(false);
    // "/query/" inside an escaped id, or past the last segment, is not a query.
    expect(readOnlyAllows('POST', '/api/v1/namespaces/default/workflows/a%2Fquery%2Fb/terminate')).toBe(false);
    expect(readOnlyAllows('POST', '/api/v1/namespaces/default/workflows/a/query/b/terminate')).toBe(false);
  });

  it('turns every write switch off and keeps the rest of the settings', () => {
    const out = readOnlySettings({ DisableWriteActions: false, WorkflowSignalDisabled: false, Version: '2.42.1' });
    expect(out).toMatchObject({ DisableWriteActions: true, WorkflowSignalDisabled: true, WorkflowUpdateDisabled: true, WorkflowTerminateDisabled: true, Version: '2.42.1' });
  });
});

describe('listening socket lookup', () => {
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:1C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0',
    '   1: 0100007F:1C41 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1',
    '   2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0 100 0 0 10 0',
  ].join('\n');
  it('finds only the listening sockets of the port', () => {
    expect(listeningInodes(table, 7233)).toEqual(['111']);
    expect(listeningInodes(table, 8080)).toEqual(['333']);
    expect(listeningInodes(table, 9999)).toEqual([]);
  });
});
