import { describe, expect, it } from 'vitest';
import { hostAllowed, hostName, hostPolicy, originAllowed, parseHostList, parseOriginList } from '../../../core/http/host-policy.ts';

describe('host policy (DNS-rebinding guard)', () => {
  it('reads host names out of Host headers', () => {
    expect(hostName('Gateway.Example.com:443')).toBe('gateway.example.com');
    expect(hostName('[::1]:8080')).toBe('[::1]');
    expect(hostName('localhost')).toBe('localhost');
  });

  it('answers the public host and ALLOWED_HOSTS only', () => {
    const p = hostPolicy('https://gw.example.com', ['gw.internal']);
    expect(hostAllowed(p, 'gw.example.com')).toBe(true);
    expect(hostAllowed(p, 'GW.example.com:443')).toBe(true);
    expect(hostAllowed(p, 'gw.internal:8080')).toBe(true);
    expect(hostAllowed(p, 'evil.example.com')).toBe(false);
    expect(hostAllowed(p, 'localhost:8080')).toBe(false); // not a loopback deployment
    expect(hostAllowed(p, undefined)).toBe(false);
  });

  it('treats every loopback name as the same machine when PUBLIC_URL is on loopback', () => {
    const p = hostPolicy('http://localhost:8080');
    for (const h of ['localhost:8080', '127.0.0.1:9999', '[::1]:8080', '127.0.0.2']) expect(hostAllowed(p, h), h).toBe(true);
    expect(hostAllowed(p, 'evil.example.com:8080')).toBe(false);
    expect(hostAllowed(p, 'localhost.evil.example.com')).toBe(false);
  });

  it('allows absent, own and configured origins; refuses null and foreign ones', () => {
    const p = hostPolicy('https://gw.example.com', [], ['https://inspector.example']);
    expect(originAllowed(p, undefined)).toBe(true);
    expect(originAllowed(p, 'https://gw.example.com')).toBe(true);
    expect(originAllowed(p, 'https://inspector.example')).toBe(true);
    expect(originAllowed(p, 'https://inspector.example:444')).toBe(false);
    expect(originAllowed(p, 'null')).toBe(false);
    expect(originAllowed(p, 'http://evil.example.com')).toBe(false);
    expect(originAllowed(hostPolicy('http://127.0.0.1:8080'), 'http://localhost:6274')).toBe(true);
  });

  it('refuses list entries that are not hosts or origins', () => {
    expect(parseHostList(' a.example , b.example:8443 ,')).toEqual(['a.example', 'b.example']);
    expect(() => parseHostList('https://a.example')).toThrow(/not a host name/);
    expect(() => parseHostList('*.example.com')).toThrow(/not a host name/);
    expect(parseOriginList('https://a.example, http://localhost:3000')).toEqual(['https://a.example', 'http://localhost:3000']);
    expect(() => parseOriginList('https://a.example/path')).toThrow(/not an origin/);
    expect(() => parseOriginList('a.example')).toThrow(/not an origin/);
  });
});
