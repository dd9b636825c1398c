// The registry as the API sees it: global templates loaded from files, custom org/user templates
// from the database (compiled through the same loader), instances, and search.
import { SECRET_SERVICE } from '../../core/permissions/keys.ts';
import type { DatabasePool } from 'slonik';
import { stringify as stringifyYaml } from 'yaml';
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
import { buildSearchIndex, searchActions, type SearchRow } from '../../core/registry/search.ts';
import { plainSummary } from '../../core/registry/summary.ts';
import type { CompiledAction, CompiledService } from '../../core/registry/types.ts';
import type { Principal } from '../auth/principal.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import { isUniqueViolation } from '../db/errors.ts';
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

interface CompiledTemplate {
  row: store.TemplateRow;
  service: CompiledService;
}

export function describeAction(a: CompiledAction) {
  return {
    action: a.key,
    summary: plainSummary(a.summary),
    summary_template: a.summary,
    ...(a.description ? { description: a.description } : {}),
    method: a.method,
    path: a.pathTemplate,
    risk: a.risk,
    ...(a.scopeParam ? { scope_param: a.scopeParam } : {}),
    parameters: a.parameters.map((p) => ({
      name: p.name,
      in: p.in,
      required: p.required,
      ...(p.description ? { description: p.description } : {}),
      type: p.schema.type,
      ...(p.schema.enum ? { enum: p.schema.enum } : {}),
      ...(p.schema.default !== undefined ? { default: p.schema.default } : {}),
    })),
    ...(a.bodySchema ? { body_schema: a.bodySchema } : {}),
    response_type: a.responseType,
    required_scopes: a.requiredScopes,
  };
}

function enabledActions(s: CompiledService): CompiledAction[] {
  return [...s.actions.values()].filter((a) => !a.disabled);
}

export function createRegistryService(deps: { pool: DatabasePool; catalog: Catalog }) {
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

  async function customTemplates(p: Viewer): Promise<{ org: Map<string, CompiledTemplate>; user: Map<string, CompiledTemplate> }> {
    const rows = await store.listTemplates(pool, p.orgId, p.userId);
    const org = new Map<string, CompiledTemplate>();
    const user = new Map<string, CompiledTemplate>();
    for (const row of rows) {
      const service = await compileRow(row);
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

  function instanceView(r: ResolvedInstance) {
    return {
      service: r.binding.name,
      template: r.service.key,
      tier: r.origin,
      scope: r.binding.scope,
      ...(r.binding.id ? { id: r.binding.id } : {}),
      title: r.service.title,
      ...(r.service.description ? { description: r.service.description } : {}),
      ...(r.service.category ? { category: r.service.category } : {}),
      runtime: r.service.runtime,
      hosts: r.service.hosts,
      auth_status: r.authStatus,
      credentials: r.credentials.map((c) =>
        c.type === 'secret'
          ? { type: 'secret', method: c.method, secret_name: c.secretName, available: c.available }
          : c.type === 'connection'
            ? { type: 'connection', method: c.method, provider: c.provider, connection_id: c.connectionId, status: c.status }
            : { type: 'none' },
      ),
      action_count: enabledActions(r.service).length,
    };
  }

  function templateView(service: CompiledService, tier: TemplateOrigin, row?: store.TemplateRow) {
    return {
      key: service.key,
      title: service.title,
      tier,
      ...(row ? { id: row.id, owner_id: row.owner_id, updated_at: row.updated_at.toISOString() } : {}),
      ...(service.description ? { description: service.description } : {}),
      ...(service.category ? { category: service.category } : {}),
      runtime: service.runtime,
      hosts: service.hosts,
      auth_methods: service.authMethods.map((m) => ({ name: m.name, type: m.type, ...(m.type === 'oauth2' ? { provider: m.provider } : {}) })),
      action_count: enabledActions(service).length,
    };
  }

  function assertHuman(p: Principal): asserts p is Extract<Principal, { type: 'user' }> {
    if (p.type !== 'user') throw forbidden('only people may change the registry');
  }

  async function validated(document: unknown): Promise<CompiledService> {
    const result = await loadServiceDocument(document, 'request');
    if (!result.ok) {
      throw new AppError('invalid_service_definition', `the service document has ${result.problems.length} problem(s)`, { problems: result.problems });
    }
    if (result.service.key === SECRET_SERVICE) {
      // `secret:<NAME>:<host>` permission keys own that first segment: a service of that name would collide.
      throw new AppError('invalid_service_definition', `the key "${SECRET_SERVICE}" is reserved`, {
        problems: [{ code: 'reserved_key', path: '/info/key', message: `the key "${SECRET_SERVICE}" is reserved for secret-injection permission keys` }],
      });
    }
    if (result.service.runtime === 'platform') {
      // Platform actions are in-process handlers that ship with the gateway; a custom document cannot add any.
      throw new AppError('invalid_service_definition', 'runtime "platform" is reserved for built-in services', {
        problems: [{ code: 'invalid_runtime', path: '/x-gateway-runtime', message: 'runtime "platform" is reserved for built-in services' }],
      });
    }
    return result.service;
  }

  async function loadOwnTemplate(p: Principal, id: string): Promise<store.TemplateRow> {
    const row = await store.getTemplate(pool, id);
    if (!row || row.org_id !== p.orgId || (row.owner_id !== null && row.owner_id !== p.userId)) throw notFound('template');
    assertHuman(p);
    if (row.owner_id === null && p.role !== 'admin') throw forbidden('only admins may change org templates');
    // A connected MCP server's template is regenerated from its tools: edited here, the next refresh would undo it.
    const server = await store.generatingMcpServer(pool, row.id);
    if (server !== null) throw conflict(`template "${row.key}" is generated from MCP server "${server}": change it with /v1/mcp-servers`, { mcp_server: server });
    return row;
  }

  return {
    catalog,
    resolveAll,
    providerHosts,

    async listTemplates(p: Principal) {
      const { org, user } = await customTemplates(p);
      return [
        ...catalog.list().map((s) => templateView(s, 'global')),
        ...[...org.values()].map((t) => templateView(t.service, 'org', t.row)),
        ...[...user.values()].map((t) => templateView(t.service, 'user', t.row)),
      ];
    },

    async createTemplate(p: Principal, input: { scope: 'org' | 'user'; document: unknown }) {
      assertHuman(p);
      if (input.scope === 'org' && p.role !== 'admin') throw forbidden('only admins may register org templates');
      const service = await validated(input.document);
      try {
        const row = await store.insertTemplate(pool, {
          orgId: p.orgId,
          ownerId: input.scope === 'user' ? p.userId : null,
          key: service.key,
          title: service.title,
          document: input.document,
          createdBy: p.identityId,
        });
        return templateView(service, input.scope, row);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`a ${input.scope} template with key "${service.key}" exists`);
        throw err;
      }
    },

    async updateTemplate(p: Principal, id: string, input: { document: unknown }) {
      const row = await loadOwnTemplate(p, id);
      const service = await validated(input.document);
      try {
        const updated = await store.updateTemplate(pool, row.id, { key: service.key, title: service.title, document: input.document });
        return templateView(service, updated.owner_id ? 'user' : 'org', updated);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`a template with key "${service.key}" exists`);
        throw err;
      }
    },

    /** A custom template with its document as text, for editing: YAML text as stored, an object as YAML. */
    async getTemplateSource(p: Principal, id: string) {
      assertHuman(p);
      const row = await store.getTemplate(pool, id);
      if (!row || row.org_id !== p.orgId || (row.owner_id !== null && row.owner_id !== p.userId)) throw notFound('template');
      const service = await compileRow(row);
      if (!service) throw notFound('template');
      const source = typeof row.document === 'string' ? row.document : stringifyYaml(row.document);
      return { ...templateView(service, row.owner_id ? 'user' : 'org', row), source };
    },

    async deleteTemplate(p: Principal, id: string) {
      const row = await loadOwnTemplate(p, id);
      await store.deleteTemplate(pool, row.id);
      compiled.delete(row.id);
    },

    async listInstances(p: Principal) {
      return (await resolveAll(p)).map(instanceView);
    },

    /** The instance a call names; 404 when the caller cannot see such a service. `read`: its lookup, read already (by another statement). */
    async resolveInstance(p: Viewer, name: string, read?: store.InstanceLookup): Promise<ResolvedInstance> {
      const hit = await resolveOne(p, name, read);
      if (!hit) throw notFound(`service "${name}"`);
      return hit;
    },

    async getInstance(p: Principal, name: string) {
      const r = await this.resolveInstance(p, name);
      return { ...instanceView(r), actions: enabledActions(r.service).map(describeAction) };
    },

    async createInstance(p: Principal, input: { name: string; template: string; scope: 'org' | 'user'; secret_name?: string | undefined; connection_id?: string | undefined }) {
      assertHuman(p);
      if (input.scope === 'org' && p.role !== 'admin') throw forbidden('only admins may create org-wide service instances');
      if (input.secret_name && input.connection_id) throw invalidRequest('bind either secret_name or connection_id, not both');
      if (input.name === SECRET_SERVICE) throw invalidRequest(`the name "${SECRET_SERVICE}" is reserved`, { field: 'name' });
      const { scopes } = await scopesFor(p);
      const resolved = resolveByScope(input.template, scopes);
      if (!resolved) throw invalidRequest(`unknown template "${input.template}"`, { field: 'template' });
      const methods = resolved.service.authMethods;
      if (input.secret_name && !methods.some((m) => m.type !== 'oauth2')) throw invalidRequest('this template takes no API-key secret', { field: 'secret_name' });
      if (input.connection_id) {
        if (!methods.some((m) => m.type === 'oauth2')) throw invalidRequest('this template takes no OAuth connection', { field: 'connection_id' });
        const conn = await store.getConnection(pool, input.connection_id);
        if (!conn || conn.org_id !== p.orgId || (conn.owner_id !== p.userId && p.role !== 'admin')) throw invalidRequest('unknown connection', { field: 'connection_id' });
      }
      try {
        const row = await store.insertInstance(pool, {
          orgId: p.orgId,
          ownerId: input.scope === 'user' ? p.userId : null,
          name: input.name,
          templateKey: input.template,
          secretName: input.secret_name ?? null,
          connectionId: input.connection_id ?? null,
          createdBy: p.identityId,
        });
        return this.getInstance(p, row.name);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`a service instance named "${input.name}" exists`);
        throw err;
      }
    },

    async deleteInstance(p: Principal, name: string) {
      assertHuman(p);
      const hit = (await resolveAll(p)).find((r) => r.binding.name === name);
      if (!hit || !hit.binding.id) throw notFound(`service instance "${name}"`);
      if (hit.binding.scope === 'org' && p.role !== 'admin') throw forbidden('only admins may delete org-wide service instances');
      await store.deleteInstance(pool, hit.binding.id);
    },

    async search(p: Principal, query: string, limit: number) {
      const rows: SearchRow[] = [];
      for (const r of await resolveAll(p)) {
        for (const a of enabledActions(r.service)) {
          rows.push({
            service: r.binding.name,
            template: r.service.key,
            action: a.key,
            summary: plainSummary(a.summary),
            ...(a.description ? { description: a.description } : {}),
            risk: a.risk,
            authStatus: r.authStatus,
          });
        }
      }
      return searchActions(buildSearchIndex(rows), query, limit).map(({ row, score }) => ({
        service: row.service,
        template: row.template,
        action: row.action,
        description: row.description ?? row.summary,
        summary: row.summary,
        risk: row.risk,
        auth_status: row.authStatus,
        score,
      }));
    },
  };
}

export type RegistryService = ReturnType<typeof createRegistryService>;
