// A request that matches none of a union's shapes is told what is wrong with the closest one.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { zodToAppError } from '../../../server/errors.ts';

const body = z.union([
  z.strictObject({ service: z.string(), action: z.string() }),
  z.strictObject({ method: z.string(), url: z.string() }),
  z.strictObject({ approval_id: z.uuid() }),
]);
const issuesOf = (input: unknown) => zodToAppError(body.safeParse(input).error!).details!.issues;

describe('zodToAppError', () => {
  it('names the missing field of the shape the input came closest to, not "Invalid input"', () => {
    expect(issuesOf({ service: 'widgets' })).toEqual([{ path: 'action', message: expect.stringMatching(/expected string/), code: 'invalid_type' }]);
    expect(issuesOf({ method: 'GET' })).toEqual([{ path: 'url', message: expect.stringMatching(/expected string/), code: 'invalid_type' }]);
    expect(issuesOf({ approval_id: 'nope' })).toEqual([{ path: 'approval_id', message: 'Invalid UUID', code: 'invalid_format' }]);
  });

  it('keeps the path of a union nested in an object', () => {
    const nested = z.object({ call: body });
    const err = zodToAppError(nested.safeParse({ call: { service: 'widgets' } }).error!, 'invalid arguments');
    expect(err.details!.issues).toEqual([{ path: 'call.action', message: expect.any(String), code: 'invalid_type' }]);
    expect(err.message).toMatch(/^invalid arguments: call\.action: /);
  });
});
