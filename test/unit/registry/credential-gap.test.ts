import { describe, expect, it } from 'vitest';
import { credentialGap, type CredentialChoice } from '../../../core/registry/instances.ts';

const oauth = (status: string | null, connectionId: string | null = status ? 'c1' : null): CredentialChoice => ({ type: 'connection', method: 'oauth', provider: 'github', connectionId, status });
const secret = (available: boolean): CredentialChoice => ({ type: 'secret', method: 'token', secretName: 'GITHUB_TOKEN', available });
const action = (securitySchemes?: string[]) => ({ requiredScopes: ['repo'], ...(securitySchemes ? { securitySchemes } : {}) });

describe('credentialGap', () => {
  it('is null when no credential is needed or one is ready', () => {
    expect(credentialGap([{ type: 'none' }], action())).toBeNull();
    expect(credentialGap([oauth('active'), secret(false)], action())).toBeNull();
    expect(credentialGap([oauth(null), secret(true)], action())).toBeNull();
  });

  it('names a connection waiting for (re)authorization first', () => {
    expect(credentialGap([secret(false), oauth('pending')], action())).toMatchObject({ kind: 'connection', connectionId: 'c1', status: 'pending' });
    expect(credentialGap([secret(false), oauth('reauth_required')], action())).toMatchObject({ kind: 'connection', status: 'reauth_required' });
  });

  it('otherwise follows the document order, offering the secret as an alternative', () => {
    expect(credentialGap([oauth(null), secret(false)], action())).toEqual({ kind: 'connection', provider: 'github', connectionId: null, status: null, requiredScopes: ['repo'], orSecret: 'GITHUB_TOKEN' });
    expect(credentialGap([secret(false), oauth(null)], action())).toEqual({ kind: 'secret', secretName: 'GITHUB_TOKEN' });
  });

  it("respects the action's own security schemes", () => {
    // Only the token method is accepted: a ready OAuth connection does not help.
    expect(credentialGap([oauth('active'), secret(false)], action(['token']))).toEqual({ kind: 'secret', secretName: 'GITHUB_TOKEN' });
    expect(credentialGap([oauth(null), secret(true)], action(['oauth']))).toMatchObject({ kind: 'connection', connectionId: null });
    expect(credentialGap([oauth(null)], action(['other']))).toBeNull();
  });
});
