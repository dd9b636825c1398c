// An approver must never be told less than a rule allows (issue 26): for every action of every
// built-in service, each suggested tier's description is checked against what its keys match.
// A second call that differs from the first in everything the key does not bind (every other
// parameter, the body, the query) must be matched by the exact tier — and its description must say
// so; nothing may claim to be "only this exact call".
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { actionPermissionKey, httpPermissionKey } from '../../../core/permissions/keys.ts';
import { matchesPattern } from '../../../core/permissions/patterns.ts';
import { suggestedTiers } from '../../../core/permissions/tiers.ts';
import { loadServiceDirectories } from '../../../server/registry/loader.ts';

const SERVICES_DIR = fileURLToPath(new URL('../../../services', import.meta.url));

describe('tier descriptions of the built-in catalog', async () => {
  const { services } = await loadServiceDirectories([SERVICES_DIR], { error: () => {} });

  it('say exactly what each tier grants, for every action', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const service of services) {
      for (const action of service.actions.values()) {
        const scope = action.scopeParam;
        const key = (params: Record<string, unknown>, body?: unknown) => actionPermissionKey(service.key, action.key, scope, params, body);
        const first = key(scope ? { [scope]: 'value-a' } : {}, scope ? { [scope]: 'value-a' } : undefined);
        // Another call: the same scope value, every other parameter and the body different.
        const others = Object.fromEntries(action.parameters.filter((p) => p.name !== scope).map((p) => [p.name, 'changed']));
        const second = key({ ...others, ...(scope ? { [scope]: 'value-a' } : {}) }, { other: 'changed', ...(scope ? { [scope]: 'value-a' } : {}) });
        const tiers = suggestedTiers([first]);
        for (const [i, t] of tiers.entries()) {
          checked++;
          if (/exact|only/i.test(t.description)) problems.push(`${service.key}.${action.key} tier ${i}: claims exactness: ${t.description}`);
          if (!t.keys.every((k) => matchesPattern(k, second))) problems.push(`${service.key}.${action.key} tier ${i}: does not match a call that differs outside its key`);
          const bindsArg = t.keys.some((k) => !k.endsWith(':*'));
          const hasOtherInputs = action.parameters.some((p) => p.name !== scope) || action.bodySchema !== undefined;
          if (bindsArg && hasOtherInputs && !t.description.includes('with any other parameters')) {
            problems.push(`${service.key}.${action.key} tier ${i}: binds only ${scope} but does not say the other parameters are free: ${t.description}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });

  it('raw HTTP: the exact tier says that any query and body are included, and they are', () => {
    const first = httpPermissionKey('POST', 'https://pay.example.com/pay?to=alice');
    const second = httpPermissionKey('POST', 'https://pay.example.com/pay?to=mallory&amount=50000');
    const [exact] = suggestedTiers([first]);
    expect(exact!.description).toBe('POST pay.example.com/pay with any query and body');
    expect(exact!.keys.every((k) => matchesPattern(k, second))).toBe(true);
  });
});
