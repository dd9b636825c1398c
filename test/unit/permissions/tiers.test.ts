import { describe, expect, it } from 'vitest';
import { PermissionKeyError } from '../../../core/permissions/keys.ts';
import { derivedKeys, isSubsetOfTiers, suggestedTiers, tierKeys } from '../../../core/permissions/tiers.ts';

describe('suggestedTiers', () => {
  it.each([
    [
      'service key with arg',
      ['slack:post:C1'],
      [
        { keys: ['slack:post:C1'], description: 'post on slack for C1, with any other parameters' },
        { keys: ['slack:post:*'], description: 'Any post on slack' },
        { keys: ['slack:*:*'], description: 'Any action on slack' },
      ],
    ],
    [
      'service key without scope collapses the first two tiers',
      ['slack:post:*'],
      [
        { keys: ['slack:post:*'], description: 'Any post on slack' },
        { keys: ['slack:*:*'], description: 'Any action on slack' },
      ],
    ],
    [
      'missing scope value stays narrow in the first tier',
      ['slack:post:<missing>'],
      [
        { keys: ['slack:post:<missing>'], description: 'post on slack without its scope parameter, with any other parameters' },
        { keys: ['slack:post:*'], description: 'Any post on slack' },
        { keys: ['slack:*:*'], description: 'Any action on slack' },
      ],
    ],
    [
      'raw http key',
      ['http:POST:api.example.com/a/b'],
      [
        { keys: ['http:POST:api.example.com/a/b'], description: 'POST api.example.com/a/b with any query and body' },
        { keys: ['http:POST:api.example.com/*'], description: 'Any POST request to api.example.com' },
        { keys: ['http:ANY:api.example.com/*'], description: 'Any request to api.example.com' },
      ],
    ],
    [
      'raw http root path',
      ['http:GET:h.com:8080/'],
      [
        { keys: ['http:GET:h.com:8080/'], description: 'GET h.com:8080/ with any query and body' },
        { keys: ['http:GET:h.com:8080/*'], description: 'Any GET request to h.com:8080' },
        { keys: ['http:ANY:h.com:8080/*'], description: 'Any request to h.com:8080' },
      ],
    ],
    [
      'several keys broaden together and deduplicate',
      ['slack:post:C1', 'slack:post:C2', 'slack:read:C1', 'slack:post:C1'],
      [
        {
          keys: ['slack:post:C1', 'slack:post:C2', 'slack:read:C1'],
          description: 'post on slack for C1, with any other parameters; post on slack for C2, with any other parameters; read on slack for C1, with any other parameters',
        },
        { keys: ['slack:post:*', 'slack:read:*'], description: 'Any post on slack; Any read on slack' },
        { keys: ['slack:*:*'], description: 'Any action on slack' },
      ],
    ],
    [
      'mixed service and http keys',
      ['github:merge:7', 'http:PUT:h.com/x'],
      [
        { keys: ['github:merge:7', 'http:PUT:h.com/x'], description: 'merge on github for 7, with any other parameters; PUT h.com/x with any query and body' },
        { keys: ['github:merge:*', 'http:PUT:h.com/*'], description: 'Any merge on github; Any PUT request to h.com' },
        { keys: ['github:*:*', 'http:ANY:h.com/*'], description: 'Any action on github; Any request to h.com' },
      ],
    ],
    [
      'exact tier with a whole-action key says what it grants',
      ['slack:post:C1', 'slack:list:*'],
      [
        { keys: ['slack:post:C1', 'slack:list:*'], description: 'post on slack for C1, with any other parameters; Any list on slack' },
        { keys: ['slack:post:*', 'slack:list:*'], description: 'Any post on slack; Any list on slack' },
        { keys: ['slack:*:*'], description: 'Any action on slack' },
      ],
    ],
  ])('%s', (_name, keys, expected) => {
    expect(suggestedTiers(keys)).toEqual(expected);
  });

  it('first tier holds exactly the derived keys', () => {
    const keys = ['a:b:c', 'http:GET:h/x', 'a:b:c'];
    expect(suggestedTiers(keys)[0]?.keys).toEqual(derivedKeys(keys));
    expect(derivedKeys(keys)).toEqual(['a:b:c', 'http:GET:h/x']);
  });

  it.each([['nope'], ['http:GET:nohost']])('rejects invalid key %j', (key) => {
    expect(() => suggestedTiers([key])).toThrow(PermissionKeyError);
  });
});

describe('tierKeys / isSubsetOfTiers', () => {
  const tiers = suggestedTiers(['slack:post:C1', 'http:POST:h.com/a']);

  it('flattens without duplicates', () => {
    expect(tierKeys(tiers)).toEqual([
      'slack:post:C1',
      'http:POST:h.com/a',
      'slack:post:*',
      'http:POST:h.com/*',
      'slack:*:*',
      'http:ANY:h.com/*',
    ]);
  });

  it.each([
    [['slack:post:C1'], true],
    [['slack:*:*', 'http:POST:h.com/a'], true],
    [['http:ANY:h.com/*'], true],
    [['*:*:*'], false],
    [['slack:post:C2'], false],
    [['slack:post:C1', 'github:*:*'], false],
    [[], false],
  ])('%j → %s', (remember, expected) => {
    expect(isSubsetOfTiers(remember, tiers)).toBe(expected);
  });
});
