// What authenticating a request read in the same statement as its session or agent key, handed on
// explicitly — routes pass it to the services that would otherwise read it again. It belongs to
// that one request: nothing keeps it anywhere else, and a principal built for anyone else (a stored
// call's requester, a derived viewer) has none.
import type { Request } from 'express';
import type { ApprovalViewRow } from '../approvals/store.ts';
import type { AgentKeyWithChain } from '../identities/readers.ts';
import type { InstanceLookup } from '../registry/store.ts';

/** The chain (the principal's identity first, its user last; every member active when read) and the org's approval settings. */
export type RequestChain = Pick<AgentKeyWithChain, 'chain' | 'org'>;

export interface ReadAlong {
  /** Agent keys: the caller's chain and org settings (a call checks against them). */
  chain?: RequestChain;
  /** The service instance a call request names (server/registry/request-lookup.ts). */
  instance?: { name: string; lookup: InstanceLookup };
  /** The approval a /v1/approvals/{id} request names; row null: none such (server/approvals/request-approval.ts). */
  approval?: { id: string; row: ApprovalViewRow | null };
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by the authenticate middleware. */
    along?: ReadAlong;
  }
}

/** What this request's authentication read along (empty when nothing did). */
export const readAlongOf = (req: Request): ReadAlong => req.along ?? {};

/** The instance lookup read along, if it is for `name`. */
export const alongInstance = (along: ReadAlong | undefined, name: string): InstanceLookup | undefined =>
  along?.instance?.name === name ? along.instance.lookup : undefined;

/** The approval view read along, if it is of `id` (null: none such; undefined: not read along). */
export const alongApproval = (along: ReadAlong | undefined, id: string): ApprovalViewRow | null | undefined =>
  along?.approval && along.approval.id === id.toLowerCase() ? along.approval.row : undefined;
