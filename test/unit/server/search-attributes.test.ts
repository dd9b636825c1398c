import { describe, expect, it } from 'vitest';
import { compareSearchAttributes, MissingSearchAttributesError, registerCommand } from '../../../server/temporal/search-attributes.ts';

describe('search attribute check', () => {
  it('lists what the namespace lacks and what has another type', () => {
    expect(compareSearchAttributes({})).toEqual({ missing: ['GatewayOrg', 'GatewayAgent', 'GatewayService', 'GatewayAction', 'GatewayStatus'], wrongType: [] });
    // 2 = Keyword, 1 = Text (temporal.api.enums.v1.IndexedValueType); the enum name form is accepted too.
    expect(compareSearchAttributes({ GatewayOrg: 2, GatewayAgent: 'INDEXED_VALUE_TYPE_KEYWORD', GatewayService: 1, GatewayAction: 2, Other: 3 })).toEqual({
      missing: ['GatewayStatus'],
      wrongType: ['GatewayService'],
    });
  });

  it('names the missing attributes and the command that registers them, on one line', () => {
    const err = new MissingSearchAttributesError('prod', ['GatewayOrg', 'GatewayStatus'], 'the server refused to register them');
    expect(err.message).not.toContain('\n');
    expect(err.message).toContain('lacks the search attributes GatewayOrg, GatewayStatus');
    expect(err.message.endsWith(registerCommand('prod', ['GatewayOrg', 'GatewayStatus']))).toBe(true);
    expect(registerCommand('prod', ['GatewayOrg', 'GatewayStatus'])).toBe(
      'temporal operator search-attribute create --namespace prod --name GatewayOrg --type Keyword --name GatewayStatus --type Keyword',
    );
  });
});
