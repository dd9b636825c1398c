// A decision on an approval, as REST and MCP take it: the one statement of its rules. The schema
// pieces describe the shape; `resolveRequest` judges the combination (remember_keys and ttl go
// with allow_remember only) and turns it into the workflow's `resolve` input.
import { z } from 'zod';
import { parseTtl } from '../../core/permissions/ttl.ts';
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

export interface ResolveBody {
  decision: ResolveDecision;
  remember_keys?: string[] | undefined;
  ttl?: string | undefined;
  reason?: string | undefined;
}

/** The decision as the workflow takes it; `invalid_request` naming the field when it does not hold together. */
export function resolveRequest(body: ResolveBody): Omit<ResolveInput, 'resolverId' | 'resolverIsAdmin'> {
  const decision = RESOLVE_DECISIONS[body.decision];
  const reason = body.reason ? { reason: body.reason } : {};
  if (decision !== 'allow_remember') {
    if (body.remember_keys || body.ttl) {
      throw invalidRequest('remember_keys and ttl go with allow_remember / allow_always only', { field: body.remember_keys ? 'remember_keys' : 'ttl' });
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
  return { decision, rememberKeys: body.remember_keys!, rememberTtlMs: ttl.ms, rememberTtl: body.ttl!, ...reason };
}
