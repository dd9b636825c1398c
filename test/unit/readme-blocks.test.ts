// The README test's reading of a Markdown document: which shell blocks run, which are marked.
import { expect, it } from 'vitest';
import { shellBlocks } from '../support/readme-blocks.ts';

it('finds sh, bash and shell blocks with their lines, and the not-tested marker just before a fence', () => {
  const doc = [
    '# T', // 1
    '```sh', // 2
    'curl -s $GW/v1/x', // 3
    '```', // 4
    '<!-- not-tested: needs Docker -->', // 5
    '', // 6
    '```bash', // 7
    'docker-compose up', // 8
    '```', // 9
    '```yaml', // 10
    'a: 1', // 11
    '```', // 12
    '<!-- not-tested: far away -->', // 13
    'text between', // 14
    '```shell', // 15
    'npx gateway help', // 16
    '```', // 17
  ].join('\n');
  expect(shellBlocks(doc)).toEqual([
    { line: 2, code: 'curl -s $GW/v1/x' },
    { line: 7, code: 'docker-compose up', notTested: 'needs Docker' },
    { line: 15, code: 'npx gateway help' },
  ]);
});

it('refuses a marker without a reason and an unclosed block', () => {
  expect(() => shellBlocks('<!-- not-tested: -->\n```sh\nx\n```')).toThrow(/reason/);
  expect(() => shellBlocks('```sh\nx\n')).toThrow(/never closed/);
});
