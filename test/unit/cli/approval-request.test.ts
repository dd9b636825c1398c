// `gateway approvals show`: the request an approver decides on, as it will be sent.
import { expect, it } from 'vitest';
import { requestLines } from '../../../cli/commands/approvals.ts';

it('shows method, URL and a JSON body', () => {
  expect(requestLines({ method: 'POST', url: 'https://api.example/pay?to=alice', body: { amount: 5 } })).toEqual([
    'request:     POST https://api.example/pay?to=alice',
    'body:',
    '  {',
    '    "amount": 5',
    '  }',
  ]);
});

it('says there is no body by showing none', () => {
  expect(requestLines({ method: 'GET', url: 'https://api.example/items', body: null })).toEqual(['request:     GET https://api.example/items']);
});

it('cuts a long body with a marker that says how long it was', () => {
  const body = { note: 'x'.repeat(10_000) };
  const lines = requestLines({ method: 'POST', url: 'https://api.example/notes', body });
  expect(lines.at(-1)).toBe(`  … (truncated: ${JSON.stringify(body, null, 2).length} characters in all; --json shows the whole body)`);
  expect(lines.join('\n').length).toBeLessThan(4_200);
  const many = requestLines({ method: 'POST', url: 'https://api.example/list', body: Array.from({ length: 100 }, (_, i) => i) });
  expect(many.length).toBeLessThan(45);
  expect(many.at(-1)).toMatch(/^ {2}… \(truncated: \d+ characters in all/);
});
