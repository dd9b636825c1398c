import { describe, expect, it } from 'vitest';
import { bodyText } from '../../../web/src/lib/components/approvals/request-text.ts';

describe('the body of a request beside an approval', () => {
  it('shows JSON indented and text as it is; nothing for no body', () => {
    expect(bodyText({ name: 'report', n: 2 }, 100)).toEqual({ text: '{\n  "name": "report",\n  "n": 2\n}', truncated: false });
    expect(bodyText('plain text', 100)).toEqual({ text: 'plain text', truncated: false });
    for (const none of [undefined, null, '']) expect(bodyText(none, 100)).toBeNull();
  });

  it('cuts at the limit and says so; exactly the limit is whole', () => {
    expect(bodyText('x'.repeat(10), 10)).toEqual({ text: 'x'.repeat(10), truncated: false });
    expect(bodyText('x'.repeat(11), 10)).toEqual({ text: 'x'.repeat(10), truncated: true });
    const long = bodyText({ value: 'v'.repeat(400) }, 280)!;
    expect(long.truncated).toBe(true);
    expect(long.text).toHaveLength(280);
  });

  it('never leaves half of a surrogate pair at the cut', () => {
    const cut = bodyText(`abc${'😀'.repeat(5)}`, 6)!;
    expect(cut).toEqual({ text: 'abc😀', truncated: true });
    expect(cut.text.isWellFormed()).toBe(true);
  });
});
