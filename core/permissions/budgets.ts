// Rule budgets: a number of calls, or a sum of a numeric request field, per fixed window.
// `{calls: 20, per: "1d"}` or `{sum: "body.amount", max: 500, per: "1d"}`. Pure: validation, the
// window a moment falls in, the amount a call uses, and the budget in words. Charging is one
// atomic PostgreSQL statement (server/identities/budget-store.ts).
import type { ConditionRequest } from './conditions.ts';

export type RuleBudget = { calls: number; per: string } | { sum: string; max: number; per: string };

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PER = /^([1-9][0-9]{0,3})([mhd])$/;
const MAX_PER_MS = 90 * UNIT_MS.d;
/** A field path: `body.` or `params.` then identifiers (what `sum` may add up). */
const SUM_FIELD = /^(body|params|query)(\.[A-Za-z_][A-Za-z0-9_]*){1,8}$/;
const MAX_AMOUNT = 1e15;

export type BudgetCheck = { ok: true; budget: RuleBudget } | { ok: false; field: string; message: string };

/** The window length of `per` ("15m", "1h", "1d": at most 90d), or null. */
export function windowMs(per: string): number | null {
  const m = PER.exec(per);
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms <= MAX_PER_MS ? ms : null;
}

/** Validates a budget as a client sent it (unknown keys refused). */
export function validateBudget(input: unknown): BudgetCheck {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { ok: false, field: 'budget', message: 'budget must be an object' };
  const b = input as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  if (typeof b.per !== 'string' || windowMs(b.per) === null) return { ok: false, field: 'budget.per', message: 'per must look like 30m, 1h or 1d (at most 90d)' };
  if (keys === 'calls,per') {
    if (!Number.isSafeInteger(b.calls) || (b.calls as number) < 1 || (b.calls as number) > 1_000_000) return { ok: false, field: 'budget.calls', message: 'calls must be an integer from 1 to 1000000' };
    return { ok: true, budget: { calls: b.calls as number, per: b.per } };
  }
  if (keys === 'max,per,sum') {
    if (typeof b.sum !== 'string' || !SUM_FIELD.test(b.sum)) return { ok: false, field: 'budget.sum', message: 'sum must name a request field such as body.amount' };
    if (typeof b.max !== 'number' || !Number.isFinite(b.max) || b.max <= 0 || b.max > MAX_AMOUNT) return { ok: false, field: 'budget.max', message: `max must be a number above 0 and at most ${MAX_AMOUNT}` };
    return { ok: true, budget: { sum: b.sum, max: b.max, per: b.per } };
  }
  return { ok: false, field: 'budget', message: 'budget is {calls, per} or {sum, max, per}' };
}

/** The start of the fixed window (aligned to the Unix epoch) that `now` falls in. */
export function windowStart(budget: RuleBudget, now: Date): Date {
  const ms = windowMs(budget.per) ?? UNIT_MS.d;
  return new Date(Math.floor(now.getTime() / ms) * ms);
}

/** The budget's limit: calls, or the sum's max. */
export const budgetLimit = (budget: RuleBudget): number => ('calls' in budget ? budget.calls : budget.max);

/**
 * What one call uses: 1 for a call budget; for a sum, the field's value — null when it is missing,
 * not a finite number, or negative (such a call cannot be charged, so the budget does not cover it).
 */
export function callAmount(budget: RuleBudget, request: ConditionRequest | null): number | null {
  if ('calls' in budget) return 1;
  if (!request) return null;
  let value: unknown = request;
  for (const segment of budget.sum.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, segment)) return null;
    value = (value as Record<string, unknown>)[segment];
  }
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function perInWords(per: string): string {
  const m = PER.exec(per);
  if (!m) return per;
  const n = Number(m[1]);
  const unit = { m: 'minute', h: 'hour', d: 'day' }[m[2] as 'm' | 'h' | 'd'];
  return n === 1 ? `per ${unit}` : `per ${n} ${unit}s`;
}

/** "at most 3 calls per hour", "body.amount adding up to at most 500 per day". */
export function describeBudget(budget: RuleBudget): string {
  return 'calls' in budget
    ? `at most ${budget.calls} call${budget.calls === 1 ? '' : 's'} ${perInWords(budget.per)}`
    : `${budget.sum} adding up to at most ${budget.max} ${perInWords(budget.per)}`;
}
