// The registry as the API sees it: global templates loaded from files, custom org/user templates
// from the database (compiled through the same loader: resolver.ts), imports of vendor documents
// (import/), instances, and search.
import { SECRET_SERVICE } from '../../core/permissions/keys.ts';
import type { DatabasePool } from 'slonik';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { Catalog } from '../../core/registry/catalog.ts';
import { resolveTemplate as resolveByScope } from '../../core/registry/catalog.ts';
import { buildSearchSegment, searchActions, type SearchSegment } from '../../core/registry/search.ts';
import { plainSummary } from '../../core/registry/summary.ts';
import type { CompiledService } from '../../core/registry/types.ts';
import type { Principal } from '../auth/principal.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { convertDocument, REVIEW_HOST } from './import/convert.ts';
import { ImportRefused } from './import/errors.ts';
import { carryReviewEdits, templateChanges } from './import/review.ts';
import { verifyAgainstLoader } from './import/verify.ts';
import { loadServiceDocument } from './loader.ts';
import { createInstanceResolver, type ResolvedInstance, type Viewer } from './resolver.ts';
import * as store from './store.ts';
import { describeAction, enabledActions, instanceView, templateView } from './views.ts';

export type { ResolvedInstance, Viewer };
export { describeAction };

export function createRegistryService(deps: { pool: DatabasePool; catalog: Catalog }) {
  const { pool, catalog } = deps;
  const { compileRow, customTemplates, scopesFor, resolveAll, providerHosts, resolveOne, forget } = createInstanceResolver(deps);
  // Search rows and their word index built once per compiled service (a new version compiles to a
  // new object) and per instance name and auth status: a query then only looks up and scores matches.
  const searchSegments = new WeakMap<CompiledService, Map<string, SearchSegment>>();
  const searchSegment = (r: ResolvedInstance): SearchSegment => {
    let byInstance = searchSegments.get(r.service);
    if (!byInstance) searchSegments.set(r.service, (byInstance = new Map()));
    const key = `${r.binding.name}\u0000${r.authStatus}`;
    let segment = byInstance.get(key);
    if (!segment) {
      segment = buildSearchSegment(
        enabledActions(r.service).map((a) => ({
          service: r.binding.name,
          template: r.service.key,
          action: a.key,
          summary: plainSummary(a.summary),
          ...(a.description ? { description: a.description } : {}),
          risk: a.risk,
          authStatus: r.authStatus,
        })),
      );
      byInstance.set(key, segment);
    }
    return segment;
  };
  function assertHuman(p: Principal): asserts p is Extract<Principal, { type: 'user' }> {
    if (p.type !== 'user') throw forbidden('only people may change the registry');
  }

  async function validated(document: unknown): Promise<CompiledService> {
    const result = await loadServiceDocument(document, 'request');
    if (!result.ok) {
      throw new AppError('invalid_service_definition', `the service document has ${result.problems.length} problem(s)`, { problems: result.problems });
    }
    return allowedForCustom(result.service);
  }

  /** What only built-in services may be: checked on every custom document, written or imported. */
  function allowedForCustom(service: CompiledService): CompiledService {
    if (service.key === SECRET_SERVICE) {
      // `secret:<NAME>:<host>` permission keys own that first segment: a service of that name would collide.
      throw new AppError('invalid_service_definition', `the key "${SECRET_SERVICE}" is reserved`, {
        problems: [{ code: 'reserved_key', path: '/info/key', message: `the key "${SECRET_SERVICE}" is reserved for secret-injection permission keys` }],
      });
    }
    if (service.runtime === 'platform') {
      // Platform actions are in-process handlers that ship with the gateway; a custom document cannot add any.
      throw new AppError('invalid_service_definition', 'runtime "platform" is reserved for built-in services', {
        problems: [{ code: 'invalid_runtime', path: '/x-gateway-runtime', message: 'runtime "platform" is reserved for built-in services' }],
      });
    }
    return service;
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
      // Drafts are for the people reviewing them; an agent's listing shows what it may call.
      const { org, user } = await customTemplates(p, p.type === 'user');
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

    /**
     * Converts a vendor's OpenAPI document (server/registry/import/). A dry run answers the
     * template and the report; otherwise the template is saved as a draft, or replaces the
     * same-scope template of that key as a draft again (a re-import: review edits carry over and
     * `changes` lists what the vendor changed). Drafts stay invisible to agents until published.
     */
    async importTemplate(p: Principal, input: { document: unknown; key?: string | undefined; scope: 'org' | 'user'; dry_run: boolean }) {
      assertHuman(p);
      if (input.scope === 'org' && p.role !== 'admin') throw forbidden('only admins may register org templates');
      const { org, user } = await customTemplates(p, true);
      const [own, others] = input.scope === 'org' ? [org, user] : [user, org];
      const takenKeys = new Set([SECRET_SERVICE, ...catalog.list().map((s) => s.key), ...others.keys()]);
      let converted;
      try {
        converted = await convertDocument(input.document, { key: input.key, takenKeys });
      } catch (err) {
        if (err instanceof ImportRefused) throw invalidRequest(err.message, { reason: err.reason, ...(err.at ? { at: err.at } : {}) });
        throw err;
      }
      const { document, report } = converted;
      const previous = own.get(report.key);
      // A connected MCP server's template is regenerated from its tools: an import must not replace it.
      const server = previous ? await store.generatingMcpServer(pool, previous.row.id) : null;
      if (server !== null) throw conflict(`template "${report.key}" is generated from MCP server "${server}": import under another key`, { mcp_server: server });
      const previousDocument = previous ? (await store.getTemplate(pool, previous.row.id))?.document : undefined;
      if (previousDocument !== undefined) carryReviewEdits(typeof previousDocument === 'string' ? parseYaml(previousDocument) : previousDocument, document);
      const verified = await verifyAgainstLoader(document, report);
      if (!verified.ok) {
        throw new AppError('invalid_service_definition', `the converted document has ${verified.problems.length} problem(s)`, { problems: verified.problems });
      }
      const service = allowedForCustom(verified.service);
      const changes = previous ? { changes: templateChanges(previous.service, service) } : {};
      if (input.dry_run) return { saved: false as const, document, report, ...changes };
      const row = previous
        ? await store.replaceWithDraft(pool, previous.row.id, { title: service.title, document })
        : await store
            .insertTemplate(pool, {
              orgId: p.orgId,
              ownerId: input.scope === 'user' ? p.userId : null,
              key: service.key,
              title: service.title,
              document,
              createdBy: p.identityId,
              status: 'draft',
            })
            .catch((err: unknown) => {
              if (isUniqueViolation(err)) throw conflict(`a ${input.scope} template with key "${service.key}" exists`);
              throw err;
            });
      return { saved: true as const, template: templateView(service, input.scope, row), report, ...changes };
    },

    /** Makes a reviewed draft callable; refused while a server URL still needs the vendor's base URL. */
    async publishTemplate(p: Principal, id: string) {
      const row = await loadOwnTemplate(p, id);
      const service = await compileRow(row);
      if (!service) throw notFound('template');
      if (service.hosts.includes(REVIEW_HOST)) {
        throw new AppError('invalid_service_definition', 'set the vendor’s base URL in servers before publishing', {
          problems: [{ code: 'invalid_server_url', path: '/servers', message: `${REVIEW_HOST} stands for a relative or missing server URL of the imported document` }],
        });
      }
      const published = await store.publishTemplate(pool, row.id);
      return templateView(service, published.owner_id ? 'user' : 'org', published);
    },

    async deleteTemplate(p: Principal, id: string) {
      const row = await loadOwnTemplate(p, id);
      await store.deleteTemplate(pool, row.id);
      forget(row.id);
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
      const segments = (await resolveAll(p)).map(searchSegment);
      return searchActions(segments, query, limit).map(({ row, score }) => ({
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
