// The dashboard's data layer: pages and components call the gateway only through the functions
// here (identities, approvals) and in ./admin/*.ts (one module a page: secrets, services, …), never
// the client (./client.ts) or fetch themselves (test/unit/web/data-access.test.ts checks it). Each
// function is one route of the public REST API under /v1, through the client typed from the
// OpenAPI document: paths, parameters, bodies and answers are checked against
// core/api/schema.ts; the types below are names for the document's schemas, never hand-written.

import { api, ApiError, sessionLost, unwrap, type ApiErrorBody, type components, type paths } from './client.ts';

export { ApiError, sessionLost, type ApiErrorBody };

type Schemas = components['schemas'];
/** The JSON body of a route's successful answer (200 or 201). */
type Answer<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: { content: { 'application/json': infer B } } }
    ? B
    : R extends { 201: { content: { 'application/json': infer B } } }
      ? B
      : never
  : never;
/** The JSON request body of a route. */
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The query parameters of a route. */
type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } } ? Q : never;

const byId = (id: string) => ({ params: { path: { id } } });

// ---- identities -------------------------------------------------------------------------------

export type Identity = Schemas['Identity'];
export type IdentityKind = Identity['kind'];
export type Me = Answer<'/v1/identities/me', 'get'>;
export type AgentKey = Schemas['AgentKey'];
export type NewAgentKey = Schemas['NewAgentKey'];
export type Rule = Schemas['Rule'];
export type Binding = Schemas['OAuthBinding'];

export const signIn = (email: string, password: string) => unwrap(api.POST('/v1/auth/login', { body: { email, password } }));
export const signOut = () => unwrap(api.POST('/v1/auth/logout')).then(() => undefined);
export const me = () => unwrap(api.GET('/v1/identities/me'));
export type IdentityQuery = NonNullable<Query<'/v1/identities', 'get'>>;
/** One page of the identities the viewer may see, oldest first (a parent before its children). */
export const listIdentityPage = (query: IdentityQuery = {}) => unwrap(api.GET('/v1/identities', { params: { query } }));
/** Every identity matching `query`, page after page (the listing's largest pages: the fewest requests). */
export async function listIdentities(query: Omit<IdentityQuery, 'limit' | 'cursor'> = {}): Promise<Identity[]> {
  const all: Identity[] = [];
  let cursor: string | undefined;
  do {
    const page = await listIdentityPage({ ...query, limit: 500, ...(cursor ? { cursor } : {}) });
    all.push(...page.identities);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}
export const getIdentity = (id: string) => unwrap(api.GET('/v1/identities/{id}', byId(id)));
export const createAgent = (body: Body<'/v1/identities/agents', 'post'>) => unwrap(api.POST('/v1/identities/agents', { body }));
export const updateIdentity = (id: string, body: Body<'/v1/identities/{id}', 'patch'>) =>
  unwrap(api.PATCH('/v1/identities/{id}', { ...byId(id), body }));
export const archiveIdentity = (id: string) => unwrap(api.POST('/v1/identities/{id}/archive', byId(id)));
export const revokeIdentity = (id: string) => unwrap(api.POST('/v1/identities/{id}/revoke', byId(id)));
export const listKeys = (id: string) => unwrap(api.GET('/v1/identities/{id}/keys', byId(id))).then((r) => r.keys);
export const createKey = (id: string, name?: string) => unwrap(api.POST('/v1/identities/{id}/keys', { ...byId(id), body: name ? { name } : {} }));
export const revokeKey = (id: string, keyId: string) =>
  unwrap(api.POST('/v1/identities/{id}/keys/{keyId}/revoke', { params: { path: { id, keyId } } })).then(() => undefined);
export const listRules = (id: string) => unwrap(api.GET('/v1/identities/{id}/rules', byId(id))).then((r) => r.rules);
export const createRule = (id: string, body: Body<'/v1/identities/{id}/rules', 'post'>) => unwrap(api.POST('/v1/identities/{id}/rules', { ...byId(id), body }));
export const revokeRule = (id: string, ruleId: string) =>
  unwrap(api.POST('/v1/identities/{id}/rules/{ruleId}/revoke', { params: { path: { id, ruleId } } })).then(() => undefined);
export const listBindings = () => unwrap(api.GET('/v1/oauth/bindings')).then((r) => r.bindings);
export const setSelfApprove = (id: string, enabled: boolean) =>
  unwrap(api.PATCH('/v1/oauth/bindings/{id}', { ...byId(id), body: { self_approve_enabled: enabled } }));
export const revokeBinding = (id: string) => unwrap(api.POST('/v1/oauth/bindings/{id}/revoke', byId(id)));

// ---- approvals --------------------------------------------------------------------------------

export type Approval = Schemas['Approval'];
export type ApprovalRecord = Schemas['ApprovalRecord'];
export type ApprovalStatus = Approval['status'];
export type Risk = Approval['risk'];
export type Tier = Schemas['Tier'];
export type Disclosed = Schemas['DisclosedValue'];
export type RedactedRequest = Schemas['RedactedRequest'];
export type Execution = Schemas['Execution'];
export type ExecutionStatus = Execution['status'];
export type BlastRadius = Schemas['BlastRadius'];
export type ResolveBody = Body<'/v1/approvals/{id}/resolve', 'post'>;
type ApprovalQuery = NonNullable<paths['/v1/approvals']['get']['parameters']['query']>;

export const listApprovals = (query: ApprovalQuery) =>
  unwrap(api.GET('/v1/approvals', { params: { query: { limit: 100, ...query } } })).then((r) => r.approvals);
export const getApproval = (id: string) => unwrap(api.GET('/v1/approvals/{id}', byId(id)));
/** The answer is the approval record (status, decision, execution), not the full view. */
export const resolveApproval = (id: string, body: ResolveBody) => unwrap(api.POST('/v1/approvals/{id}/resolve', { ...byId(id), body }));
/** One decision for several approvals: each decided on its own, the answer says per id (decided, or refused and why). */
export type BatchResolveBody = Body<'/v1/approvals/resolve', 'post'>;
export type BatchResolveResult = Schemas['BatchResolveResult']['results'][number];
export const resolveApprovals = (body: BatchResolveBody) => unwrap(api.POST('/v1/approvals/resolve', { body })).then((r) => r.results);
// Edit before approve (issue 31): the form's fields, and what an edit would run (decides nothing).
export type EditForm = Schemas['ApprovalEditForm'];
export type EditPreview = Schemas['ApprovalEditPreview'];
export type EditBody = Body<'/v1/approvals/{id}/edit-preview', 'post'>;
export const getEditForm = (id: string) => unwrap(api.GET('/v1/approvals/{id}/edit', byId(id)));
export const previewEdit = (id: string, body: EditBody) => unwrap(api.POST('/v1/approvals/{id}/edit-preview', { ...byId(id), body }));
export const blastRadius = (id: string, tier: number) =>
  unwrap(api.GET('/v1/approvals/{id}/blast-radius', { params: { path: { id }, query: { tier: String(tier) } } }));
