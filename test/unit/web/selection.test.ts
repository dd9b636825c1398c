// The inbox's multi-select (web/src/lib/components/approvals/selection.ts): toggling, keeping the
// selection to the rows still listed, and a batch's outcome in words.
import { describe, expect, it } from 'vitest';
import { batchOutcome, stillListed, toggled } from '../../../web/src/lib/components/approvals/selection.ts';

describe('inbox selection', () => {
  it('toggles an id in and out', () => {
    expect(toggled([], 'a')).toEqual(['a']);
    expect(toggled(['a', 'b'], 'a')).toEqual(['b']);
  });

  it('keeps only ids still listed, in the list’s order', () => {
    expect(stillListed(['c', 'gone', 'a'], [{ id: 'a' }, { id: 'b' }, { id: 'c' }])).toEqual(['a', 'c']);
    expect(stillListed(['x'], [])).toEqual([]);
  });

  it('says what a batch did, naming each refused approval and the reason', () => {
    const names: Record<string, string> = { a: 'Create item "a"', b: 'Create item "b"' };
    expect(batchOutcome('Allowed', [{ id: 'a', status: 'decided' }], (id) => names[id]).summary).toBe('Allowed 1 request.');
    const mixed = batchOutcome(
      'Denied',
      [
        { id: 'a', status: 'decided' },
        { id: 'b', status: 'refused', error: { code: 'not_in_your_chain', message: 'only an ancestor may resolve this approval' } },
        { id: 'z', status: 'refused', error: { code: 'conflict', message: 'the approval is expired' } },
      ],
      (id) => names[id],
    );
    expect(mixed.summary).toBe('Denied 1 request; 2 were not decided.');
    expect(mixed.refused).toEqual([
      { id: 'b', what: 'Create item "b"', reason: 'only an ancestor may resolve this approval' },
      { id: 'z', what: 'z', reason: 'the approval is expired' },
    ]);
  });
});
