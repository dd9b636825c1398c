// The append-only audit log (a trigger refuses UPDATE, DELETE and TRUNCATE). Entries carry the
// originating user, the identity chain and redacted data only: never a secret or a token.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { injectedSecrets } from '../../core/permissions/keys.ts';

export type AuditEvent =
  | 'call.called'
  | 'call.denied'
  | 'call.failed'
  | 'approval.raised'
  | 'approval.deduplicated'
  | 'approval.resolved'
  | 'approval.bubbled'
  | 'approval.expired'
  | 'approval.superseded'
  | 'approval.cancelled'
  | 'execution.started'
  | 'execution.executed'
  | 'execution.failed'
  | 'execution.expired'
  | 'execution.cancelled'
  | 'rule.planted';

export interface AuditEntry {
  orgId: string;
  event: AuditEvent;
  userId?: string | null;
  actorId?: string | null;
  identityChain?: readonly string[];
  service?: string | null;
  action?: string | null;
  permissionKeys?: readonly string[];
  decision?: string | null;
  callId?: string | null;
  approvalId?: string | null;
  executionId?: string | null;
  httpStatusCode?: number | null;
  details?: Record<string, unknown>;
  requestId?: string | null;
}

export const auditRow = z.object({
  id: z.number(),
  org_id: z.string(),
  at: z.date(),
  event: z.string(),
  user_id: z.string().nullable(),
  actor_id: z.string().nullable(),
  identity_chain: z.array(z.string()),
  service: z.string().nullable(),
  action: z.string().nullable(),
  permission_keys: z.array(z.string()),
  decision: z.string().nullable(),
  call_id: z.string().nullable(),
  approval_id: z.string().nullable(),
  execution_id: z.string().nullable(),
  http_status_code: z.number().nullable(),
  details: z.record(z.string(), z.unknown()),
  request_id: z.string().nullable(),
});
export type AuditRow = z.infer<typeof auditRow>;

/** What every audit row of one call carries, whoever writes it (the activities, the API). */
export type CallContext = Pick<AuditEntry, 'orgId' | 'userId' | 'identityChain' | 'service' | 'action' | 'permissionKeys' | 'callId' | 'requestId'>;
export type CallEvent = Omit<AuditEntry, keyof CallContext>;

/** One audit row of a call: a call that injects a vault secret names it on every row (never its value). */
export function callAuditEntry(call: CallContext, e: CallEvent): AuditEntry {
  const secrets = injectedSecrets(call.permissionKeys ?? []);
  return { ...call, ...e, ...(secrets.length > 0 ? { details: { ...e.details, secrets } } : {}) };
}

/**
 * The INSERT of one audit row, as a fragment (also used inside combined statements). With `onlyIf`
 * (a condition, e.g. on a CTE of the same statement) the row is written only when it holds. Every
 * value carries its type, so the row can be a SELECT as well as VALUES.
 */
export function auditInsert(e: AuditEntry, onlyIf?: ReturnType<typeof sql.fragment>) {
  const values = sql.fragment`${e.orgId}::uuid, ${e.event}::text, ${e.userId ?? null}::uuid, ${e.actorId ?? null}::uuid,
            ${sql.array(e.identityChain ?? [], 'uuid')}, ${e.service ?? null}::text, ${e.action ?? null}::text,
            ${sql.array(e.permissionKeys ?? [], 'text')}, ${e.decision ?? null}::text, ${e.callId ?? null}::uuid,
            ${e.approvalId ?? null}::uuid, ${e.executionId ?? null}::uuid, ${e.httpStatusCode ?? null}::int,
            ${sql.jsonb((e.details ?? {}) as never)}, ${e.requestId ?? null}::text`;
  return sql.fragment`
    INSERT INTO audit_log (org_id, event, user_id, actor_id, identity_chain, service, action, permission_keys,
                           decision, call_id, approval_id, execution_id, http_status_code, details, request_id)
    ${onlyIf ? sql.fragment`SELECT ${values} WHERE ${onlyIf}` : sql.fragment`VALUES (${values})`}`;
}

const auditIdRow = z.object({ id: z.number() });

export async function appendAudit(db: CommonQueryMethods, e: AuditEntry): Promise<number> {
  return db.oneFirst(sql.type(auditIdRow)`${auditInsert(e)} RETURNING id`);
}
