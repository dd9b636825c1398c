// Who is calling. Routes and domain services receive a Principal, never raw tokens.
export type Principal = UserPrincipal | AgentPrincipal;

export interface UserPrincipal {
  type: 'user';
  orgId: string;
  userId: string;
  /** A user is an identity too: the top of its own chain. */
  identityId: string;
  role: 'admin' | 'member' | 'approver';
  sessionId: string;
}

export interface AgentPrincipal {
  type: 'agent';
  orgId: string;
  /** The human owning the chain. */
  userId: string;
  identityId: string;
  kind: 'agent' | 'subagent';
  via: 'agent_key' | 'oauth';
  /** agent_key: the key id; oauth: the OAuth client id. */
  credentialId: string;
}

export const isAdmin = (p: Principal): boolean => p.type === 'user' && p.role === 'admin';
