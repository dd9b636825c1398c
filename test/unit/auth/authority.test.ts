import { describe, expect, it } from 'vitest';
import { AGENT_AUTHORITY, agentMayManage, authorityRowFor } from '../../../server/auth/authority.ts';
import type { Principal } from '../../../server/auth/principal.ts';

const agent: Principal = { type: 'agent', orgId: 'o', userId: 'u', identityId: 'a', kind: 'agent', via: 'agent_key', credentialId: 'k' };
const user: Principal = { type: 'user', orgId: 'o', userId: 'u', identityId: 'u', role: 'member', sessionId: 's' };

describe('the agent authority table', () => {
  it('has one row per route', () => {
    const routes = AGENT_AUTHORITY.map((r) => r.route);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('finds rows with their params, literal segments before :params', () => {
    expect(authorityRowFor('GET', '/identities/me')?.row.route).toBe('GET /identities/me');
    expect(authorityRowFor('GET', '/identities/123')).toMatchObject({ row: { route: 'GET /identities/:id' }, params: { id: '123' } });
    expect(authorityRowFor('POST', '/identities/i/keys/k/revoke')).toMatchObject({ row: { agent: 'descendant' }, params: { id: 'i', keyId: 'k' } });
    expect(authorityRowFor('HEAD', '/secrets')?.row.agent).toBe('deny');
    expect(authorityRowFor('GET', '/no/such/route')).toBeNull();
  });

  it('lets an agent manage strict descendants only', () => {
    expect(agentMayManage(agent, [{ id: 's' }, { id: 'a' }, { id: 'u' }])).toBe(true);
    expect(agentMayManage(agent, [{ id: 'a' }, { id: 'u' }])).toBe(false);
    expect(agentMayManage(agent, [{ id: 'u' }])).toBe(false);
    expect(agentMayManage(agent, [{ id: 'x' }, { id: 'y' }, { id: 'u' }])).toBe(false);
    expect(agentMayManage(user, [{ id: 'a' }, { id: 'u' }])).toBe(true);
  });
});
