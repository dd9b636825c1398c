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
  { href: '/webhooks', label: 'Webhooks', admin: true },
  { href: '/settings', label: 'Settings', admin: true },
];
