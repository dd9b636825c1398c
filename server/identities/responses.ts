// Response bodies of the identity routes, as the OpenAPI document describes them.
import { z } from 'zod';
import { nextCursor, nullableTimestamp, timestamp, uuid } from '../http/openapi/common.ts';

export const Identity = z
  .strictObject({
    id: uuid,
    kind: z.enum(['user', 'agent', 'subagent']),
    name: z.string(),
    org_id: uuid,
    parent_id: uuid.nullable(),
    user_id: uuid,
    email: z.string().nullable().optional().describe('Users only.'),
    role: z.enum(['admin', 'member', 'approver']).nullable().optional().describe('Users only; an approver is a member who also decides what is bubbled to them (issue 29).'),
    inherit_permissions: z.boolean().optional().describe('Subagents only.'),
    auto_call_on_approve: z.boolean().optional().describe('Agents and subagents only.'),
    status: z.enum(['active', 'archived', 'revoked']),
    created_at: timestamp,
  })
  .meta({ id: 'Identity' });

export const AgentKey = z
  .strictObject({
    id: uuid,
    identity_id: uuid,
    prefix: z.string(),
    name: z.string().nullable(),
    created_at: timestamp,
    last_used_at: nullableTimestamp,
    revoked_at: nullableTimestamp,
  })
  .meta({ id: 'AgentKey' });

export const NewAgentKey = z
  .strictObject({ ...AgentKey.shape, token: z.string().describe('The `osk_…` key: shown once, never again.') })
  .meta({ id: 'NewAgentKey' });

export const RuleBudgetSchema = z
  .union([
    z.strictObject({ calls: z.number().int(), per: z.string() }),
    z.strictObject({ sum: z.string(), max: z.number(), per: z.string() }),
  ])
  .describe('An allow covers only within its budget per fixed window (per: 30m, 1h, 1d, …): a number of calls, or a sum of a numeric request field.')
  .meta({ id: 'RuleBudget' });

export const Rule = z
  .strictObject({
    id: uuid,
    identity_id: uuid,
    effect: z.enum(['allow', 'deny']),
    pattern: z.string(),
    expires_at: nullableTimestamp,
    source: z.enum(['manual', 'approval']),
    approval_id: uuid.nullable(),
    created_by: uuid.nullable(),
    created_at: timestamp,
    revoked_at: nullableTimestamp,
    condition: z.string().nullable().describe('CEL condition on the request; null: the rule applies to every call its pattern matches.'),
    budget: RuleBudgetSchema.nullable(),
    budget_usage: z
      .strictObject({ used: z.number(), limit: z.number(), window_start: timestamp, resets_at: timestamp })
      .nullable()
      .describe('What the budget used in its current fixed window (calls, or the sum), counted for calls it covered and sent.'),
  })
  .meta({ id: 'Rule' });

export const Me = z.strictObject({
  identity: Identity,
  chain: z.array(Identity).describe('The caller first, then its ancestors up to the user.'),
  org: z.strictObject({ id: uuid, name: z.string() }),
  authenticated_via: z.enum(['session', 'agent_key', 'oauth']),
});

export const IdentityList = z.strictObject({ identities: z.array(Identity), next_cursor: nextCursor });
export const CreatedAgent = z.strictObject({ identity: Identity, key: NewAgentKey });
export const KeyList = z.strictObject({ keys: z.array(AgentKey) });
export const RuleList = z.strictObject({ rules: z.array(Rule) });
