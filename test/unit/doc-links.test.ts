// Every relative link (and its #anchor) in README.md and the guides in docs/ resolves: the guides
// were split out of the README and link to each other, so a renamed heading or file shows here.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingAnchors, headingSlug, markdownLinks } from '../support/markdown-links.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOCUMENTS = ['README.md', ...(await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const EXTERNAL = /^(https?:|mailto:)/;

describe('markdown links', () => {
  it('reads links and images outside code, and anchors as GitHub makes them', () => {
    const doc = ['# Title', 'See [a](a.md#x-y) and ![i](s/i.png).', '`[not](a link)`', '```', '[no](link.md)', '```', '## X: y (z)', '## X: y (z)'].join('\n');
    expect(markdownLinks(doc)).toEqual([
      { line: 2, target: 'a.md#x-y' },
      { line: 2, target: 's/i.png' },
    ]);
    expect([...headingAnchors(doc)]).toEqual(['title', 'x-y-z', 'x-y-z-1']);
    expect(headingSlug('On one machine: `npm run cluster` — README → Performance')).toBe('on-one-machine-npm-run-cluster--readme--performance');
  });

  for (const doc of DOCUMENTS) {
    it(`${doc}: every relative link resolves`, async () => {
      const text = await readFile(path.join(ROOT, doc), 'utf8');
      const broken: string[] = [];
      for (const { line, target } of markdownLinks(text)) {
        if (EXTERNAL.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file ? path.resolve(path.dirname(path.join(ROOT, doc)), decodeURIComponent(file)) : path.join(ROOT, doc);
        if (!existsSync(resolved)) {
          broken.push(`${doc}:${line} ${target}: no such file`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !headingAnchors(await readFile(resolved, 'utf8')).has(anchor)) broken.push(`${doc}:${line} ${target}: no such heading`);
      }
      expect(broken).toEqual([]);
    });
  }
});
