// Every call the dashboard makes to the gateway goes through this module: the public REST API
// under /v1, same origin, the session cookie. When the generated OpenAPI client lands, only this
// file changes (its functions keep their names and types).

import { ApiError, type ApiErrorBody } from './client.ts';

export { ApiError, type ApiErrorBody };

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/v1${path}`, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: reported below */
  }
  if (!res.ok) {
    const err = (parsed as { error?: ApiErrorBody } | null)?.error;
    throw new ApiError(res.status, err ?? { code: 'internal', message: `HTTP ${res.status}` });
  }
  return parsed as T;
}

const q = (params: Record<string, string | number | undefined>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) s.set(k, String(v));
  const str = s.toString();
  return str ? `?${str}` : '';
};

// ---- identities -------------------------------------------------------------------------------

export type IdentityKind = 'user' | 'agent' | 'subagent';
export interface Identity {
  id: string;
  kind: IdentityKind;
  name: string;
  org_id: string;
  parent_id: string | null;
  user_id: string;
  email?: string | null;
  role?: 'admin' | 'member' | null;
  inherit_permissions?: boolean;
  auto_call_on_approve?: boolean;
  status: 'active' | 'archived' | 'revoked';
  created_at: string;
}
export interface Me {
  identity: Identity;
  chain: Identity[];
  org: { id: string; name: string };
  authenticated_via: string;
}
export interface AgentKey {
  id: string;
  identity_id: string;
  prefix: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}
export interface Rule {
  id: string;
  identity_id: string;
  effect: 'allow' | 'deny';
  pattern: string;
  expires_at: string | null;
  source: 'manual' | 'approval';
  approval_id: string | null;
  created_by: string | null;
  created_at: string;
  revoked_at: string | null;
}
export interface Binding {
  id: string;
  client_id: string;
  client_name?: string | null;
  user_id: string;
  agent_id: string;
  agent?: { id: string; name: string; status?: string };
  self_approve_enabled: boolean;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export const signIn = (email: string, password: string) =>
  request<{ user: Identity; expires_at: string }>('POST', '/auth/login', { email, password });
export const signOut = () => request<void>('POST', '/auth/logout');
export const me = () => request<Me>('GET', '/identities/me');
export const listIdentities = (status?: Identity['status']) =>
  request<{ identities: Identity[] }>('GET', `/identities${q({ status })}`).then((r) => r.identities);
export const createAgent = (body: { name: string; parent_id?: string; inherit_permissions?: boolean }) =>
  request<{ identity: Identity; key: AgentKey & { token: string } }>('POST', '/identities/agents', body);
export const updateIdentity = (id: string, body: { inherit_permissions?: boolean; auto_call_on_approve?: boolean }) =>
  request<Identity>('PATCH', `/identities/${id}`, body);
export const archiveIdentity = (id: string) => request<Identity>('POST', `/identities/${id}/archive`);
export const revokeIdentity = (id: string) => request<Identity>('POST', `/identities/${id}/revoke`);
export const listKeys = (id: string) => request<{ keys: AgentKey[] }>('GET', `/identities/${id}/keys`).then((r) => r.keys);
export const createKey = (id: string, name?: string) =>
  request<AgentKey & { token: string }>('POST', `/identities/${id}/keys`, name ? { name } : {});
export const revokeKey = (id: string, keyId: string) => request<void>('POST', `/identities/${id}/keys/${keyId}/revoke`);
export const listRules = (id: string) => request<{ rules: Rule[] }>('GET', `/identities/${id}/rules`).then((r) => r.rules);
export const createRule = (id: string, body: { effect: 'allow' | 'deny'; pattern: string; ttl?: string }) =>
  request<Rule>('POST', `/identities/${id}/rules`, body);
export const revokeRule = (id: string, ruleId: string) => request<void>('POST', `/identities/${id}/rules/${ruleId}/revoke`);
export const listBindings = () => request<{ bindings: Binding[] }>('GET', '/oauth/bindings').then((r) => r.bindings);
export const setSelfApprove = (id: string, enabled: boolean) =>
  request<Binding>('PATCH', `/oauth/bindings/${id}`, { self_approve_enabled: enabled });
export const revokeBinding = (id: string) => request<Binding>('POST', `/oauth/bindings/${id}/revoke`);

// ---- approvals --------------------------------------------------------------------------------

export type Risk = 'low' | 'med' | 'high';
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'bubbled' | 'expired' | 'superseded' | 'cancelled';
export type ExecutionStatus = 'pending' | 'executing' | 'executed' | 'failed' | 'cancelled' | 'expired';
export interface Tier {
  keys: string[];
  description: string;
}
export interface Disclosed {
  label: string;
  value: unknown;
  error?: true;
  truncated?: true;
}
export interface Approval {
  id: string;
  status: ApprovalStatus;
  relationship: 'self' | 'downstream' | 'not_in_your_chain';
  risk: Risk;
  permission_keys: string[];
  suggested_tiers: Tier[];
  derived_keys: string[];
  expires_at: string;
  execution?: {
    id: string;
    status: ExecutionStatus;
    runtime: string;
    triggered_by?: string;
    http_status_code?: number;
    result?: unknown;
  };
  action: {
    service: string;
    template: string;
    action: string;
    description: string;
    request: { method?: string; url?: string; params?: Record<string, unknown>; body?: unknown; headers?: string[] } | null;
    disclosed: Disclosed[];
  } | null;
  requester: { id: string; kind?: IdentityKind; name?: string };
  resolver_id: string;
  auto_call_on_approve: boolean;
  decision: string | null;
  reason: string | null;
  resolved_by: string | null;
  resolved_at: string | null;
  created_at: string;
  approval_url: string;
}
export type Decision = 'allow_once' | 'allow_always' | 'deny' | 'bubble';
export interface BlastRadius {
  approval_id: string;
  tier: { index: number; keys: string[]; description: string };
  rule_targets: { id: string; kind: IdentityKind | null; name: string | null }[];
  pending_covered: {
    id: string;
    status: ApprovalStatus;
    risk: Risk;
    action_description: string;
    permission_keys: string[];
    requester: { id: string; kind: IdentityKind | null; name: string | null };
    created_at: string;
    expires_at: string;
  }[];
  audit: { window_days: number; calls_scanned: number; calls_covered: number; truncated: boolean };
}

export const listApprovals = (params: { scope?: 'mine' | 'assigned' | 'actionable'; status?: ApprovalStatus; limit?: number }) =>
  request<{ approvals: Approval[]; next_cursor: string | null }>('GET', `/approvals${q({ limit: 100, ...params })}`).then((r) => r.approvals);
export const getApproval = (id: string) => request<Approval>('GET', `/approvals/${id}`);
/** The answer is the approval record (status, decision, execution), not the full view. */
export interface ApprovalRecord {
  id: string;
  status: ApprovalStatus;
  execution?: Approval['execution'];
}
export const resolveApproval = (id: string, body: { decision: Decision; remember_keys?: string[]; ttl?: string; reason?: string }) =>
  request<ApprovalRecord>('POST', `/approvals/${id}/resolve`, body);
export const blastRadius = (id: string, tier: number) => request<BlastRadius>('GET', `/approvals/${id}/blast-radius${q({ tier })}`);
