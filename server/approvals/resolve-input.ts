// A decision on an approval, as REST and MCP take it: the one statement of its rules. The schema
// pieces describe the shape; `resolveRequest` judges the combination (remember_keys and ttl go
// with allow_remember only) and turns it into the workflow's `resolve` input.
import { z } from 'zod';
import type { RequestEdit } from '../../core/approvals/request-edit.ts';
import { parseTtl } from '../../core/permissions/ttl.ts';
import { compileCondition } from '../../core/permissions/conditions.ts';
import type { Decision, ResolveInput } from '../../workflows/definitions.ts';
import { invalidRequest } from '../errors.ts';

/** REST's words (MCP takes allow, deny, allow_remember); each names one workflow decision. */
export const RESOLVE_DECISIONS = {
  allow_once: 'allow',
  allow: 'allow',
  allow_always: 'allow_remember',
  allow_remember: 'allow_remember',
  deny: 'deny',
  bubble: 'bubble',
} as const satisfies Record<string, Decision>;
export type ResolveDecision = keyof typeof RESOLVE_DECISIONS;

export const rememberKeysSchema = z.array(z.string().min(1).max(2048)).min(1).max(20);
export const ttlSchema = z.string().regex(/^\d+[hd]$/, 'must look like 12h or 7d');
export const rememberConditionSchema = z
  .string()
  .max(1000)
  .describe('With allow_remember: a CEL condition the remembered rules carry (e.g. "body.amount <= 50", or the condition of the suggested tier remembered); checked like a rule\'s condition (400 with details.position).');

/** Edit before approve, service action: parameters replacing the agent's (null removes one). */
export const editParamsSchema = z
  .record(z.string().min(1).max(200), z.unknown())
  .refine((v) => Object.keys(v).length > 0 && Object.keys(v).length <= 100, 'must name 1 to 100 parameters')
  .describe("With allow_once / allow_remember, a service action's parameters replacing what the agent sent (null removes one); validated against the action's schema.");
export interface ResolveBody {
  decision: ResolveDecision;
  remember_keys?: string[] | undefined;
  ttl?: string | undefined;
  remember_condition?: string | undefined;
  reason?: string | undefined;
  params?: Record<string, unknown> | undefined;
  request?: { method?: string | undefined; url?: string | undefined; headers?: Record<string, string> | undefined; body?: unknown } | undefined;
}

/** The approver's edit the body carries (undefined: none); `invalid_request` when it does not go with the decision. */
export function editOf(body: ResolveBody): RequestEdit | undefined {
  if (body.params === undefined && body.request === undefined) return undefined;
  if (body.params !== undefined && body.request !== undefined) throw invalidRequest('give params (a service action) or request (raw HTTP), not both', { field: 'request' });
  const decision = RESOLVE_DECISIONS[body.decision];
  if (decision !== 'allow' && decision !== 'allow_remember') {
    throw invalidRequest(`an edit goes with allow_once or allow_remember, not ${body.decision}`, { field: body.params !== undefined ? 'params' : 'request' });
  }
  return body.params !== undefined ? { kind: 'params', params: body.params } : { kind: 'request', request: body.request! };
}

/** The decision as the workflow takes it; `invalid_request` naming the field when it does not hold together. */
export function resolveRequest(body: ResolveBody): Omit<ResolveInput, 'resolverId' | 'resolverIsAdmin'> {
  const decision = RESOLVE_DECISIONS[body.decision];
  const reason = body.reason ? { reason: body.reason } : {};
  if (decision !== 'allow_remember') {
    if (body.remember_keys || body.ttl || body.remember_condition !== undefined) {
      const field = body.remember_keys ? 'remember_keys' : body.ttl ? 'ttl' : 'remember_condition';
      throw invalidRequest('remember_keys, ttl and remember_condition go with allow_remember / allow_always only', { field });
    }
    return { decision, ...reason };
  }
  const missing = [!body.remember_keys?.length && 'remember_keys', !body.ttl && 'ttl'].filter((f): f is string => !!f);
  if (missing.length > 0) {
    throw invalidRequest(`${body.decision} needs ${missing.join(' and ')}: remember_keys a subset of the suggested tier keys, ttl such as "24h" or "7d"`, {
      field: missing[0],
    });
  }
  const ttl = parseTtl(body.ttl!);
  if (!ttl.ok) throw invalidRequest(ttl.message, { field: 'ttl' });
  let condition = {};
  if (body.remember_condition !== undefined) {
    const compiled = compileCondition(body.remember_condition);
    if (!compiled.ok) throw invalidRequest(`invalid remember_condition at position ${compiled.position}: ${compiled.message}`, { field: 'remember_condition', position: compiled.position });
    condition = { rememberCondition: body.remember_condition };
  }
  return { decision, rememberKeys: body.remember_keys!, rememberTtlMs: ttl.ms, rememberTtl: body.ttl!, ...condition, ...reason };
}
