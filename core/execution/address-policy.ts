// Which addresses raw HTTP may reach (DESIGN.md §5 "Outbound safety"): no loopback, private,
// link-local, unique-local, multicast, unspecified or cloud-metadata addresses unless the
// operator allows them. Checked on the resolved IP at connect time, so DNS cannot rebind it.
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
// IPv4
blocked.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", unspecified
blocked.addSubnet('10.0.0.0', 8, 'ipv4');
blocked.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT
blocked.addSubnet('127.0.0.0', 8, 'ipv4');
blocked.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, incl. 169.254.169.254 metadata
blocked.addSubnet('172.16.0.0', 12, 'ipv4');
blocked.addSubnet('192.0.0.0', 24, 'ipv4');
blocked.addSubnet('192.168.0.0', 16, 'ipv4');
blocked.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking
blocked.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
blocked.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, broadcast
// IPv6
blocked.addAddress('::', 'ipv6');
blocked.addAddress('::1', 'ipv6');
blocked.addSubnet('fc00::', 7, 'ipv6'); // unique-local, incl. fd00:ec2::254 metadata
blocked.addSubnet('fe80::', 10, 'ipv6'); // link-local
blocked.addSubnet('ff00::', 8, 'ipv6'); // multicast
blocked.addSubnet('64:ff9b::', 96, 'ipv6'); // NAT64 can embed any IPv4

/** IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries. */
function unmap(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function isPrivateAddress(address: string): boolean {
  const { address: a, family } = unmap(address);
  return blocked.check(a, family);
}

export interface AddressPolicy {
  allowPrivate: boolean;
  /** Hostnames (exact, lower case) or IP literals always allowed. */
  allowHosts: ReadonlySet<string>;
}

export function parseAllowlist(value: string | undefined): Set<string> {
  return new Set((value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}

/** Null when the connection may go ahead, else why not. */
export function refusal(policy: AddressPolicy, hostname: string, address: string): string | null {
  if (policy.allowPrivate) return null;
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (policy.allowHosts.has(host) || policy.allowHosts.has(address)) return null;
  if (isPrivateAddress(address)) return `${hostname} resolves to ${address}, a private or reserved address`;
  return null;
}
