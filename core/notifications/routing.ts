// Routing rules: which approvals go where. Ordered; the first rule whose conditions all hold
// decides (an absent condition holds for any value); a rule without conditions is the default
// route. With no rule at all every channel of the org announces to the resolver.

export const NOTICE_RISKS = ['low', 'med', 'high'] as const;

export interface RuleMatch {
  risk?: string[] | undefined;
  service?: string[] | undefined;
  action?: string[] | undefined;
  /** The requesting agent's id, or a person's (the user at the top of the chain). */
  requester_id?: string[] | undefined;
}

/** `resolver`: DM (Slack) or email the resolver; `admins`: every org admin; `channel`: the Slack channel configured. */
export type RouteTarget = 'resolver' | 'admins' | 'channel';

export interface Route {
  channel_id: string;
  to: RouteTarget;
}

export interface RoutingRule {
  id: string;
  match: RuleMatch;
  routes: Route[];
}

export interface ApprovalFacts {
  risk: string;
  service: string;
  action: string;
  requesterId: string;
  userId: string;
}

const holds = (allowed: string[] | undefined, ...values: string[]) => !allowed || allowed.length === 0 || values.some((v) => allowed.includes(v));

export function ruleMatches(rule: Pick<RoutingRule, 'match'>, a: ApprovalFacts): boolean {
  const m = rule.match;
  return holds(m.risk, a.risk) && holds(m.service, a.service) && holds(m.action, a.action) && holds(m.requester_id, a.requesterId, a.userId);
}

export interface ChannelRef {
  id: string;
  kind: 'slack' | 'email';
  /** Slack: whether the channel config names a Slack channel to post in. */
  hasSlackChannel: boolean;
  dmResolver: boolean;
}

/** The routes for one approval: the first matching rule's, else every channel's default. */
export function routesFor(rules: readonly RoutingRule[], channels: readonly ChannelRef[], a: ApprovalFacts): { ruleId: string | null; routes: Route[] } {
  const rule = rules.find((r) => ruleMatches(r, a));
  if (rule) return { ruleId: rule.id, routes: rule.routes.filter((r) => channels.some((c) => c.id === r.channel_id)) };
  const routes: Route[] = [];
  for (const c of channels) {
    if (c.kind === 'email') routes.push({ channel_id: c.id, to: 'resolver' });
    else {
      if (c.hasSlackChannel) routes.push({ channel_id: c.id, to: 'channel' });
      if (c.dmResolver) routes.push({ channel_id: c.id, to: 'resolver' });
    }
  }
  return { ruleId: null, routes };
}
