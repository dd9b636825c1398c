import { describe, expect, it } from 'vitest';
import { createCatalog, resolveTemplate } from '../../../core/registry/catalog.ts';
import { httpPseudoService } from '../../../core/registry/compile.ts';
import type { CompiledService } from '../../../core/registry/types.ts';

function service(key: string, source: string): CompiledService {
  return { ...httpPseudoService(), key, title: key.toUpperCase(), source, category: 'Test' };
}

describe('createCatalog', () => {
  it('looks services up by key and adds the http pseudo-service', () => {
    const c = createCatalog([service('slack', 'a.yaml'), service('github', 'b.yaml')]);
    expect(c.get('slack')?.source).toBe('a.yaml');
    expect(c.get('http')).toMatchObject({ title: 'Raw HTTP', category: 'Platform', hosts: [] });
    expect(c.has('nope')).toBe(false);
    expect(c.get('constructor')).toBeUndefined();
    expect(c.list().map((s) => s.key)).toEqual(['github', 'http', 'slack']);
  });

  it('keeps a shipped file that claims the http key', () => {
    const c = createCatalog([service('http', 'http.yaml')]);
    expect(c.get('http')?.source).toBe('http.yaml');
    expect(c.list()).toHaveLength(1);
  });

  it('keeps the first of two services with one key', () => {
    const c = createCatalog([service('x', 'first.yaml'), service('x', 'second.yaml')]);
    expect(c.get('x')?.source).toBe('first.yaml');
  });
});

describe('resolveTemplate', () => {
  const global = createCatalog([service('slack', 'global')]);
  const org = new Map([['slack', service('slack', 'org')], ['jira', service('jira', 'org')]]);
  const user = new Map([['slack', service('slack', 'user')]]);

  it('prefers the user template, then the org template, then the global registry', () => {
    expect(resolveTemplate('slack', { userTemplates: user, orgTemplates: org, global })).toMatchObject({ origin: 'user', service: { source: 'user' } });
    expect(resolveTemplate('slack', { orgTemplates: org, global })).toMatchObject({ origin: 'org', service: { source: 'org' } });
    expect(resolveTemplate('jira', { userTemplates: user, orgTemplates: org, global })).toMatchObject({ origin: 'org' });
    expect(resolveTemplate('slack', { userTemplates: new Map(), global })).toMatchObject({ origin: 'global', service: { source: 'global' } });
    expect(resolveTemplate('http', { userTemplates: user, orgTemplates: org, global })).toMatchObject({ origin: 'global', service: { key: 'http' } });
  });

  it('returns undefined for an unknown key', () => {
    expect(resolveTemplate('nope', { userTemplates: user, orgTemplates: org, global })).toBeUndefined();
  });
});
