import { describe, expect, it } from 'vitest';
import { findJsonProblem, findUnstorableText, MAX_JSON_DEPTH } from '../../../core/text/storable.ts';

const nested = (levels: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
};

describe('findJsonProblem', () => {
  it('finds the first unstorable string or key, in document order, with its path', () => {
    expect(findJsonProblem({ a: 'ok', b: [1, 'x\u0000y'] })).toEqual({ problem: 'unstorable', path: 'b.1' });
    expect(findJsonProblem({ a: { 'bad\u0000key': 1 }, z: 'x\u0000' })).toEqual({ problem: 'unstorable', path: 'a.bad?key' });
    expect(findJsonProblem({ first: '\ud800', second: '\u0000' })?.path).toBe('first');
    expect(findJsonProblem({ a: [{ b: 'fine' }], n: null, t: true, x: 1 })).toBeUndefined();
    expect(findUnstorableText('\u0000')).toBe('');
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels, and allows exactly that many`, () => {
    expect(findJsonProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(findJsonProblem(nested(MAX_JSON_DEPTH + 1))?.problem).toBe('too_deep');
  });

  it('walks hostile nesting without recursion: 200,000 levels do not overflow the stack', () => {
    // A recursive walk throws RangeError (maximum call stack size) long before this depth.
    const deep = nested(200_000);
    expect(findJsonProblem(deep, Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(findJsonProblem(deep)?.problem).toBe('too_deep');
  });
});
