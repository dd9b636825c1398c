// `gateway agents rules AGENT` (its rules in words) and `gateway agents allow|deny AGENT PATTERN`
// with an optional condition (--when) and, for an allow, a budget (--calls N | --sum FIELD --max M,
// with --per). The gateway checks the condition and the budget; this only shapes the request.
import type { Command } from 'commander';
import { describeBudget, type RuleBudget } from '../../core/permissions/budgets.ts';
import { ok, resolveCaller } from '../lib/caller.ts';
import { usageError } from '../lib/errors.ts';
import { table } from '../lib/format.ts';
import { resolveIdentityRef } from '../lib/identities.ts';
import { print, printJson, say } from '../lib/output.ts';

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

export interface RuleOptions {
  when?: string;
  ttl?: string;
  calls?: string;
  sum?: string;
  max?: string;
  per?: string;
}

/** The rule as `POST /v1/identities/{id}/rules` takes it; a usage error when the budget options do not fit together. */
export function ruleBody(effect: 'allow' | 'deny', pattern: string, o: RuleOptions) {
  const budgeted = o.calls !== undefined || o.sum !== undefined || o.max !== undefined;
  if (budgeted && effect === 'deny') throw usageError('only an allow rule takes a budget (--calls, --sum, --max)');
  if (o.per !== undefined && !budgeted) throw usageError('--per goes with --calls N or --sum FIELD --max M');
  if (o.calls !== undefined && (o.sum !== undefined || o.max !== undefined)) throw usageError('give --calls N, or --sum FIELD with --max M, not both');
  if ((o.sum === undefined) !== (o.max === undefined) && o.calls === undefined) throw usageError('--sum FIELD and --max M go together');
  let budget: { budget: RuleBudget } | Record<string, never> = {};
  if (budgeted) {
    if (!o.per) throw usageError('a budget needs --per (e.g. 1h, 1d)');
    budget = { budget: o.calls !== undefined ? { calls: Number(o.calls), per: o.per } : { sum: o.sum!, max: Number(o.max), per: o.per } };
  }
  return { effect, pattern, ...(o.when !== undefined ? { condition: o.when } : {}), ...(o.ttl !== undefined ? { ttl: o.ttl } : {}), ...budget };
}

/** A rule's "when" in words: its condition and its budget (with what it used). */
export function ruleWhen(r: { condition: string | null; budget: RuleBudget | null; budget_usage: { used: number; limit: number } | null }): string {
  const parts = [r.condition ? `only when ${r.condition}` : '', r.budget ? `${describeBudget(r.budget)}${r.budget_usage ? ` (${r.budget_usage.used} of ${r.budget_usage.limit} used)` : ''}` : ''];
  return parts.filter(Boolean).join('; ') || 'always';
}

export function addRuleCommands(agents: Command): void {
  agents
    .command('rules')
    .description('the rules of an agent, with their conditions and budgets in words')
    .argument('<agent>', 'its name, id, or the start of its id')
    .option('--json', 'machine-readable output')
    .action(async (ref: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ json?: boolean }>();
      const c = await caller(cmd);
      const id = await resolveIdentityRef(c, ref);
      const { rules } = await ok(c.api.GET('/v1/identities/{id}/rules', { params: { path: { id } } }));
      if (o.json) return printJson(rules);
      if (!rules.length) return say('No rules: every call of this agent asks for approval.');
      print(table(['EFFECT', 'PATTERN', 'WHEN', 'EXPIRES', 'ID'], rules.map((r) => [r.effect, r.pattern, ruleWhen(r), r.expires_at ?? 'never', r.id])));
    });
  for (const effect of ['allow', 'deny'] as const) {
    agents
      .command(effect)
      .description(`add ${effect === 'allow' ? 'an allow' : 'a deny'} rule to an agent (people only)`)
      .argument('<agent>', 'its name, id, or the start of its id')
      .argument('<pattern>', 'a permission key pattern, e.g. stripe:create_refund:*')
      .option('--when <condition>', 'a CEL condition on the request: the rule applies only when it holds (e.g. "body.amount <= 50")')
      .option('--ttl <duration>', 'the rule expires after this long (12h, 7d)')
      .option('--calls <n>', 'budget: at most N calls per --per (allow only)')
      .option('--sum <field>', 'budget: add up this request field (e.g. body.amount), at most --max per --per (allow only)')
      .option('--max <m>', 'budget: the most --sum may add up to')
      .option('--per <window>', 'budget window: 30m, 1h, 1d, …')
      .option('--json', 'machine-readable output')
      .action(async (ref: string, pattern: string, _o: unknown, cmd: Command) => {
        const o = cmd.optsWithGlobals<RuleOptions & { json?: boolean }>();
        const body = ruleBody(effect, pattern, o);
        const c = await caller(cmd);
        const id = await resolveIdentityRef(c, ref);
        const rule = await ok(c.api.POST('/v1/identities/{id}/rules', { params: { path: { id } }, body }));
        if (o.json) return printJson(rule);
        say(`Added ${rule.effect} ${rule.pattern} (${ruleWhen(rule)}) as ${rule.id}.`);
      });
  }
}
