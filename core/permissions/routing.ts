// Who decides an approval once it has climbed the identity chain to the requester's user (issue
// 29): the user, then the user's approver, then the org's admins. Pure: the caller supplies the
// people. The approval inbox, "Bubble up" and the notifications of the routing issue (30) all
// take the resolvers from here, so "whose is this?" has one answer.

export type Role = 'admin' | 'member' | 'approver';

export interface Person {
  id: string;
  name: string;
  role: Role;
  /** The person "Bubble up" goes to from this one (null: the org's admins). */
  approverId: string | null;
  active: boolean;
}

/** Where an approval sits: inside the chain (its workflow moves it), with the user's approver, with the admins. */
export type Stage = 'chain' | 'approver' | 'admins';
export type RoutedStage = Exclude<Stage, 'chain'>;

export interface Routing {
  stage: RoutedStage;
  /** The people who may decide at this stage (admins may always step in besides). */
  resolverIds: string[];
}

const activeAdmins = (people: readonly Person[]) => people.filter((p) => p.active && p.role === 'admin');

/**
 * The next stage above `from` for an approval of `user`'s tree: the user's approver when one is
 * set, active and still an approver or admin (and is not the user), else the org's active admins
 * other than the user; null when nobody is above (already with the admins, or the user is the
 * only admin).
 */
export function nextRouting(from: Stage, user: Person, people: readonly Person[]): Routing | null {
  if (from === 'chain') {
    const approver = user.approverId ? people.find((p) => p.id === user.approverId) : undefined;
    // Someone named approver who has since become a plain member no longer decides for others.
    if (approver && approver.active && approver.role !== 'member' && approver.id !== user.id) return { stage: 'approver', resolverIds: [approver.id] };
  }
  if (from === 'admins') return null;
  const admins = activeAdmins(people).filter((p) => p.id !== user.id);
  return admins.length > 0 ? { stage: 'admins', resolverIds: admins.map((p) => p.id) } : null;
}

/**
 * Whether "Bubble up" can move an open approval: inside the chain below the user its workflow
 * hands it to the next identity up; from the user on, `nextRouting` must find someone above.
 */
export function canBubble(a: { stage: Stage; resolverId: string; user: Person }, people: readonly Person[]): boolean {
  if (a.stage === 'chain' && a.resolverId !== a.user.id) return true;
  return nextRouting(a.stage, a.user, people) !== null;
}

/** Everyone who may decide an approval at `stage` (with `resolverId` its recorded resolver). */
export function resolversAt(stage: Stage, resolverId: string, people: readonly Person[]): string[] {
  if (stage === 'admins') return activeAdmins(people).map((p) => p.id);
  return [resolverId];
}

/**
 * Why an approval is the viewer's to decide, in words the inbox shows ("you are Sam's approver",
 * "bubbled from Dana"); null when it is not theirs by routing (their own chain, or not theirs).
 */
export function whyYours(
  viewer: Pick<Person, 'id' | 'role'>,
  a: { stage: Stage; resolverId: string; routedFrom: Person | null; user: Person },
): string | null {
  const from = `bubbled from ${(a.routedFrom ?? a.user).name}`;
  if (a.stage === 'approver' && a.resolverId === viewer.id) return `${from}: you are ${a.user.name}'s approver`;
  if (a.stage === 'admins' && viewer.role === 'admin') return `${from}: it went to the org's admins`;
  return null;
}
