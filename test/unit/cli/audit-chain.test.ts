// `gateway audit`: the chain beside the ids, as people read it.
import { expect, it } from 'vitest';
import { chainNames } from '../../../cli/commands/audit.ts';

it('reads an audit chain person first, names where known, ids where not', () => {
  expect(chainNames({ identity_chain: ['sub', 'agent', 'user'], identity_chain_names: ['helper', 'assistant', 'dana'] })).toBe('dana › assistant › helper');
  expect(chainNames({ identity_chain: ['gone', 'user'], identity_chain_names: [null, 'dana'] })).toBe('dana › gone');
});
