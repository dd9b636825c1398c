// What the registry's answers show of a template, an instance and an action (pure).
import type { TemplateOrigin } from '../../core/registry/catalog.ts';
import { plainSummary } from '../../core/registry/summary.ts';
import type { CompiledAction, CompiledService } from '../../core/registry/types.ts';
import type { ResolvedInstance } from './resolver.ts';
import type * as store from './store.ts';

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
    ...(a.fixedHeaders ? { headers: a.fixedHeaders } : {}),
    response_type: a.responseType,
    required_scopes: a.requiredScopes,
  };
}

export function enabledActions(s: CompiledService): CompiledAction[] {
  return [...s.actions.values()].filter((a) => !a.disabled);
}

export function instanceView(r: ResolvedInstance) {
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

export function templateView(service: CompiledService, tier: TemplateOrigin, row?: store.TemplateHead) {
  return {
    key: service.key,
    title: service.title,
    tier,
    ...(row ? { id: row.id, owner_id: row.owner_id, updated_at: row.updated_at.toISOString(), status: row.status } : {}),
    ...(service.description ? { description: service.description } : {}),
    ...(service.category ? { category: service.category } : {}),
    runtime: service.runtime,
    hosts: service.hosts,
    auth_methods: service.authMethods.map((m) => ({ name: m.name, type: m.type, ...(m.type === 'oauth2' ? { provider: m.provider } : {}) })),
    action_count: enabledActions(service).length,
  };
}

