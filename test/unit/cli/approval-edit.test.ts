// `gateway approve ID --set key=value`: values as JSON when they parse, else as text.
import { expect, it } from 'vitest';
import { parseSet } from '../../../cli/commands/approvals.ts';

it('reads --set values as JSON when they parse, else as text; refuses a pair without a key', () => {
  expect(parseSet('amount=50')).toEqual(['amount', 50]);
  expect(parseSet('draft=true')).toEqual(['draft', true]);
  expect(parseSet('to=acct-9')).toEqual(['to', 'acct-9']);
  expect(parseSet('meta={"a":1}')).toEqual(['meta', { a: 1 }]);
  expect(parseSet('note=a=b')).toEqual(['note', 'a=b']);
  expect(parseSet('empty=')).toEqual(['empty', '']);
  expect(() => parseSet('=x')).toThrow(/key=value/);
  expect(() => parseSet('novalue')).toThrow(/key=value/);
});
