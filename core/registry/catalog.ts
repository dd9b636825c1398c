// The global (built-in) registry plus template resolution: user → org → global.

import { HTTP_PSEUDO_SERVICE_KEY, httpPseudoService } from './compile.ts';
import type { CompiledService } from './types.ts';

/** Anything that can look a template up by key: a Map, a Catalog, a cache. */
export interface TemplateSource {
  get(key: string): CompiledService | undefined;
}

export interface Catalog extends TemplateSource {
  has(key: string): boolean;
  /** Services sorted by key, the http pseudo-service included. */
  list(): CompiledService[];
}

/**
 * Later duplicates are ignored (the loader already reports them). The raw HTTP pseudo-service
 * is added unless a shipped file claims the `http` key.
 */
export function createCatalog(services: readonly CompiledService[]): Catalog {
  const byKey = new Map<string, CompiledService>();
  for (const s of services) if (!byKey.has(s.key)) byKey.set(s.key, s);
  if (!byKey.has(HTTP_PSEUDO_SERVICE_KEY)) byKey.set(HTTP_PSEUDO_SERVICE_KEY, httpPseudoService());
  const sorted = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    get: (key) => byKey.get(key),
    has: (key) => byKey.has(key),
    list: () => [...sorted],
  };
}

export type TemplateOrigin = 'user' | 'org' | 'global';

export interface TemplateScopes {
  userTemplates?: TemplateSource;
  orgTemplates?: TemplateSource;
  global: TemplateSource;
}

export interface ResolvedTemplate {
  service: CompiledService;
  origin: TemplateOrigin;
}

/** Most specific first: a user's own template, then the org's, then the built-in registry. */
export function resolveTemplate(key: string, scopes: TemplateScopes): ResolvedTemplate | undefined {
  const order: Array<[TemplateOrigin, TemplateSource | undefined]> = [
    ['user', scopes.userTemplates],
    ['org', scopes.orgTemplates],
    ['global', scopes.global],
  ];
  for (const [origin, source] of order) {
    const service = source?.get(key);
    if (service !== undefined) return { service, origin };
  }
  return undefined;
}
