// The shell's navigation. Admin pages get their entries here when their routes exist; until then
// they are not listed, so no link leads to a page that is not there.
export interface NavItem {
  href: string;
  label: string;
  /** Shown to org admins only. */
  admin?: boolean;
  /** The live pending-approvals count goes beside it. */
  badge?: 'pending';
}

export const NAV: NavItem[] = [
  { href: '/approvals', label: 'Approvals', badge: 'pending' },
  { href: '/agents', label: 'Agents' },
  { href: '/secrets', label: 'Secrets' },
  { href: '/connections', label: 'Connections' },
  { href: '/services', label: 'Services' },
  { href: '/audit', label: 'Audit' },
  { href: '/webhooks', label: 'Webhooks', admin: true },
  // Everyone sees the org's people (members read-only); admins manage them there.
  { href: '/settings/people', label: 'People' },
  { href: '/settings', label: 'Settings', admin: true },
];

/**
 * The entry a page belongs to: the one whose href is the longest prefix of the path, so People
 * (/settings/people) is current there, not Settings as well.
 */
export function currentHref(items: readonly NavItem[], pathname: string): string | null {
  const matching = items.filter((i) => pathname === i.href || pathname.startsWith(`${i.href}/`));
  return matching.sort((a, b) => b.href.length - a.href.length)[0]?.href ?? null;
}
