// Charging a rule's budget: one statement per rule, atomic across replicas. The window's row is
// increased by an upsert whose DO UPDATE only applies while the new total stays within the budget:
// PostgreSQL locks the row and re-reads its latest version, so concurrent charges (any process)
// serialise on it and never pass the limit together. The charge ledger makes a retried check of
// the same call free (a call is charged once per rule).
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { budgetLimit, describeBudget, type RuleBudget } from '../../core/permissions/budgets.ts';

const chargeResult = z.object({ already: z.boolean(), charged: z.boolean(), used: z.string().nullable() });

export interface Charge {
  ruleId: string;
  budget: RuleBudget;
  callId: string;
  windowStart: Date;
  amount: number;
}

/**
 * How a charge treats the limit: `within` adds only while the new total stays within the budget (a
 * covered call); `regardless` always adds (a call a person allowed is sent whatever the budget says).
 */
export type ChargeMode = 'within' | 'regardless';

/** True when the call is (now or already) charged to the rule; false when the budget cannot take it. */
export async function chargeRule(db: CommonQueryMethods, c: Charge, mode: ChargeMode = 'within'): Promise<{ charged: boolean; used: number }> {
  const max = budgetLimit(c.budget);
  const ws = sql.timestamp(c.windowStart);
  const fits = mode === 'within' ? sql.fragment`AND ${c.amount}::numeric <= ${max}::numeric` : sql.fragment``;
  const stillFits = mode === 'within' ? sql.fragment`WHERE w.used + EXCLUDED.used <= ${max}::numeric` : sql.fragment``;
  const r = await db.one(sql.type(chargeResult)`
    WITH prior AS (SELECT 1 FROM rule_budget_charges WHERE rule_id = ${c.ruleId} AND call_id = ${c.callId}),
    charged AS (
      INSERT INTO rule_budget_windows AS w (rule_id, window_start, used)
      SELECT ${c.ruleId}::uuid, ${ws}, ${c.amount}::numeric WHERE NOT EXISTS (SELECT 1 FROM prior) ${fits}
      ON CONFLICT (rule_id, window_start) DO UPDATE SET used = w.used + EXCLUDED.used ${stillFits}
      RETURNING used),
    ledger AS (
      INSERT INTO rule_budget_charges (rule_id, call_id, window_start, amount)
      SELECT ${c.ruleId}::uuid, ${c.callId}::uuid, ${ws}, ${c.amount}::numeric FROM charged RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM prior) AS already, EXISTS (SELECT 1 FROM charged) AS charged,
           COALESCE((SELECT used FROM charged), (SELECT used FROM rule_budget_windows WHERE rule_id = ${c.ruleId} AND window_start = ${ws}), 0)::text AS used`);
  return { charged: r.already || r.charged, used: Number(r.used ?? 0) };
}

/** Why a budget refused a call, for the approval: "at most 3 calls per hour: 3 used". */
export function refusalReason(budget: RuleBudget, used: number, amount: number | null): string {
  if (amount === null) return `${describeBudget(budget)}: this call has no non-negative number at ${'sum' in budget ? budget.sum : ''}`;
  return 'calls' in budget ? `${describeBudget(budget)}: ${used} used` : `${describeBudget(budget)}: ${used} used, this call adds ${amount}`;
}

class BudgetRefused extends Error {
  readonly ruleId: string;
  readonly reason: string;
  constructor(ruleId: string, reason: string) {
    super('budget refused');
    this.ruleId = ruleId;
    this.reason = reason;
  }
}

/**
 * Charges every budget a covered call relies on, all or none (one transaction): the rules that
 * could not take it, with why (empty: all charged).
 */
export async function chargeAll(pool: DatabasePool, charges: ReadonlyArray<Omit<Charge, 'amount'> & { amount: number | null }>): Promise<Map<string, string>> {
  const refused = new Map<string, string>();
  const unchargeable = charges.find((c) => c.amount === null);
  if (unchargeable) return refused.set(unchargeable.ruleId, refusalReason(unchargeable.budget, 0, null));
  try {
    await pool.transaction(async (tx) => {
      for (const c of charges) {
        const r = await chargeRule(tx, { ...c, amount: c.amount as number });
        if (!r.charged) throw new BudgetRefused(c.ruleId, refusalReason(c.budget, r.used, c.amount));
      }
    });
  } catch (err) {
    if (!(err instanceof BudgetRefused)) throw err;
    refused.set(err.ruleId, err.reason);
  }
  return refused;
}

/**
 * Charges an approved call, as it is sent, to the budgets it falls under, past their limits if need
 * be: a person allowed it, so the budget counts it and never stops it. A rule whose sum field the
 * call lacks has nothing to add. Retried, a call is charged once per rule (the ledger).
 */
export async function chargeRegardless(pool: DatabasePool, charges: ReadonlyArray<Omit<Charge, 'amount'> & { amount: number | null }>): Promise<void> {
  const countable = charges.filter((c): c is Charge => c.amount !== null);
  if (countable.length === 0) return;
  await pool.transaction(async (tx) => {
    for (const c of countable) await chargeRule(tx, c, 'regardless');
  });
}

const windowUse = z.object({ rule_id: z.string(), window_start: z.date(), used: z.string() });

/** What each rule used in the given windows (rule id → amount; a rule absent used nothing). */
export async function usedInWindows(db: CommonQueryMethods, windows: ReadonlyArray<{ ruleId: string; windowStart: Date }>): Promise<Map<string, number>> {
  if (windows.length === 0) return new Map();
  const rows = await db.any(sql.type(windowUse)`
    SELECT rule_id, window_start, used::text AS used FROM rule_budget_windows
    WHERE rule_id = ANY(${sql.array(windows.map((w) => w.ruleId), 'uuid')})`);
  const wanted = new Map(windows.map((w) => [w.ruleId, w.windowStart.getTime()]));
  return new Map(rows.filter((r) => wanted.get(r.rule_id) === r.window_start.getTime()).map((r) => [r.rule_id, Number(r.used)]));
}
