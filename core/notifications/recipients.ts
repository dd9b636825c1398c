// Who a notice "to the resolver" reaches: a person. The approval's resolver when it is a person;
// when it is an agent (an approval raised by a subagent waits on its parent first), the person at
// the top of the chain, who holds authority over it too. Issue 29's approver routing plugs in
// where the resolver is computed (the call workflow's bubble), so whoever it names is notified.

export interface ChainMember {
  id: string;
  kind: 'user' | 'agent' | 'subagent';
}

export function personToNotify(resolverId: string, chain: readonly ChainMember[], userId: string): string {
  const resolver = chain.find((c) => c.id === resolverId);
  if (!resolver || resolver.kind === 'user') return resolverId;
  return userId;
}
