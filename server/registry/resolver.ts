// Which service instances a viewer can call, resolved against its templates (user, org, built-in)
// and credentials: every instance for listings and search, one by name for the call path (one
// round trip, or none when the name's lookup was read along with the caller's authentication).
// Custom templates are compiled through the loader once per version.
import type { DatabasePool } from 'slonik';
import type { Catalog, TemplateOrigin } from '../../core/registry/catalog.ts';
import { resolveTemplate as resolveByScope } from '../../core/registry/catalog.ts';
import {
  authStatus,
  credentialChoices,
  visibleInstances,
  type AuthStatus,
  type CredentialChoice,
  type CredentialContext,
  type InstanceBinding,
} from '../../core/registry/instances.ts';
import type { CompiledService } from '../../core/registry/types.ts';
import type { Principal } from '../auth/principal.ts';
import { loadServiceDocument } from './loader.ts';
import * as store from './store.ts';

export interface ResolvedInstance {
  binding: InstanceBinding;
  service: CompiledService;
  origin: TemplateOrigin;
  credentials: CredentialChoice[];
  authStatus: AuthStatus;
}

/** Whose registry view: templates and instances are per org and per user (agents see their user's). */
export type Viewer = Pick<Principal, 'orgId' | 'userId'>;

export interface CompiledTemplate {
  row: store.TemplateHead;
  service: CompiledService;
}

export function createInstanceResolver(deps: { pool: DatabasePool; catalog: Catalog }) {
  const { pool, catalog } = deps;
  // Compiled custom templates, keyed by row id and invalidated by updated_at.
  const compiled = new Map<string, { updatedAt: number; service: CompiledService }>();

  async function compileRow(row: store.TemplateRow): Promise<CompiledService | null> {
    const hit = compiled.get(row.id);
    if (hit && hit.updatedAt === row.updated_at.getTime()) return hit.service;
    const result = await loadServiceDocument(row.document, `${row.owner_id ? 'user' : 'org'}:${row.id}`);
    if (!result.ok) return null; // stored documents were valid when written; a loader change can still reject one
    compiled.set(row.id, { updatedAt: row.updated_at.getTime(), service: result.service });
    return result.service;
  }

  /** `drafts`: include imports under review (people listing templates); agents' views never do. */
  async function customTemplates(p: Viewer, drafts = false): Promise<{ org: Map<string, CompiledTemplate>; user: Map<string, CompiledTemplate> }> {
    const rows = await store.listTemplateHeads(pool, p.orgId, p.userId);
    const org = new Map<string, CompiledTemplate>();
    const user = new Map<string, CompiledTemplate>();
    for (const row of rows) {
      if (row.status === 'draft' && !drafts) continue;
      const service = await compiledById(row.id, row.updated_at.getTime());
      if (!service) continue;
      (row.owner_id ? user : org).set(row.key, { row, service });
    }
    return { org, user };
  }

  async function scopesFor(p: Viewer) {
    const { org, user } = await customTemplates(p);
    const source = (m: Map<string, CompiledTemplate>) => ({ get: (k: string) => m.get(k)?.service });
    return { org, user, scopes: { userTemplates: source(user), orgTemplates: source(org), global: catalog } };
  }

  async function credentialContext(p: Viewer): Promise<CredentialContext> {
    const [secretNames, connections] = await Promise.all([store.orgSecretNames(pool, p.orgId), store.userConnections(pool, p.orgId, p.userId)]);
    return { secretNames, connections };
  }

  async function bindings(p: Viewer, templateKeys: string[]): Promise<InstanceBinding[]> {
    const rows = await store.listInstances(pool, p.orgId, p.userId);
    const explicit: InstanceBinding[] = rows.map((r) => ({
      name: r.name,
      templateKey: r.template_key,
      secretName: r.secret_name,
      connectionId: r.connection_id,
      scope: r.owner_id ? 'user' : 'org',
      id: r.id,
    }));
    return visibleInstances(explicit, templateKeys);
  }

  /** Every instance the principal can call, resolved against its templates and credentials. */
  async function resolveAll(p: Viewer): Promise<ResolvedInstance[]> {
    const { org, user, scopes } = await scopesFor(p);
    const keys = [...new Set([...catalog.list().map((s) => s.key), ...org.keys(), ...user.keys()])];
    const [all, ctx] = await Promise.all([bindings(p, keys), credentialContext(p)]);
    const out: ResolvedInstance[] = [];
    for (const binding of all) {
      const resolved = resolveByScope(binding.templateKey, scopes);
      if (!resolved) continue; // an instance whose template was deleted
      const credentials = credentialChoices(resolved.service, binding, ctx);
      out.push({ binding, service: resolved.service, origin: resolved.origin, credentials, authStatus: authStatus(credentials) });
    }
    return out;
  }

  /** A compiled custom template by id and version: the document is read only on a cache miss. */
  async function compiledById(id: string, updatedMs: number): Promise<CompiledService | null> {
    const hit = compiled.get(id);
    if (hit && hit.updatedAt === updatedMs) return hit.service;
    const row = await store.getTemplate(pool, id);
    return row ? compileRow(row) : null;
  }

  /**
   * The hosts an OAuth provider's token is for: the servers of every template an admin vetted (the
   * built-in catalog and the org's templates; never a member's own) that authenticates with it.
   */
  async function providerHosts(p: Viewer, provider: string): Promise<Set<string>> {
    const hosts = new Set<string>();
    for (const r of await resolveAll(p)) {
      if (r.origin === 'user') continue;
      if (r.service.authMethods.some((m) => m.type === 'oauth2' && m.provider === provider)) for (const h of r.service.hosts) hosts.add(h);
    }
    return hosts;
  }

  /**
   * The same answer as `resolveAll(p).find(name)`, for one name and in one round trip (the call
   * path): an explicit instance of that name (the user's before the org's), else the implicit
   * instance of a visible template with that key; its template by scope (user, org, global).
   */
  async function resolveOne(p: Viewer, name: string, read?: store.InstanceLookup): Promise<ResolvedInstance | null> {
    const found = read ?? (await store.instanceLookup(pool, p.orgId, p.userId, name));
    const template = async (ownerScope: 'user' | 'org', key: string) => {
      const stamp = found.templates.find((t) => t.key === key && (ownerScope === 'user' ? t.owner_id !== null : t.owner_id === null));
      return stamp ? compiledById(stamp.id, stamp.updated_ms) : null;
    };
    const scopes = async (key: string) => {
      const [user, org] = await Promise.all([template('user', key), template('org', key)]);
      const source = (s: CompiledService | null) => ({ get: (k: string) => (k === key && s ? s : undefined) });
      return { userTemplates: source(user), orgTemplates: source(org), global: catalog };
    };
    const explicit = found.instances.find((i) => i.owner_id !== null) ?? found.instances[0];
    let binding: InstanceBinding;
    if (explicit) {
      binding = {
        name: explicit.name,
        templateKey: explicit.template_key,
        secretName: explicit.secret_name,
        connectionId: explicit.connection_id,
        scope: explicit.owner_id ? 'user' : 'org',
        id: explicit.id,
      };
    } else {
      binding = { name, templateKey: name, secretName: null, connectionId: null, scope: 'implicit', id: null };
    }
    const resolved = resolveByScope(binding.templateKey, await scopes(binding.templateKey));
    if (!resolved) return null;
    const credentials = credentialChoices(resolved.service, binding, { secretNames: new Set(found.secret_names), connections: found.connections });
    return { binding, service: resolved.service, origin: resolved.origin, credentials, authStatus: authStatus(credentials) };
  }

  return {
    compileRow,
    customTemplates,
    scopesFor,
    resolveAll,
    providerHosts,
    resolveOne,
    /** A template deleted or rewritten: its compiled form is dropped. */
    forget: (id: string) => void compiled.delete(id),
  };
}

export type InstanceResolver = ReturnType<typeof createInstanceResolver>;
