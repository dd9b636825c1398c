// The disclose fast path for plain path filters must give exactly what jq gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainPathOutcome } from '../../../server/execution/disclose.ts';
import { runJq } from '../../../server/registry/jq.ts';

const key = fc.constantFrom('params', 'id', 'body', 'a', 'b', '_x1', 'missing');
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;

async function viaJq(input: unknown, filter: string): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    return { ok: true, value: JSON.parse(await runJq(JSON.stringify(input), `[${filter}\n]`, ['-c'])) };
  } catch {
    return { ok: false };
  }
}

describe('disclose: plain path filters', () => {
  it('agrees with jq on values, nulls and errors', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.array(key, { minLength: 1, maxLength: 3 }), fc.boolean(), async (input, path, spaced) => {
        const filter = (spaced ? '  ' : '') + path.map((k) => `.${k}`).join('') + (spaced ? ' ' : '');
        const fast = plainPathOutcome(filter, () => input);
        expect(fast).toBeDefined();
        const jq = await viaJq(input, filter);
        expect(fast!.ok).toBe(jq.ok);
        if (fast!.ok && jq.ok) expect(JSON.parse(fast!.output)).toEqual(jq.value);
      }),
      { numRuns: 100 },
    );
  }, 120_000); // jq-wasm is slow on a busy machine

  it('leaves every other filter to jq', () => {
    for (const f of ['.', '.a[0]', '.a | length', '.["a"]', '.a?', '.a,.b', '..', '.a // "x"']) expect(plainPathOutcome(f, () => ({}))).toBeUndefined();
  });
});
