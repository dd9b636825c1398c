// Response bodies of the registry routes: templates, service instances, action descriptions, search.
import { z } from 'zod';
import { timestamp, uuid } from '../http/openapi/common.ts';

const runtime = z.enum(['http', 'mcp', 'platform']);
const risk = z.enum(['read', 'write', 'delete']);
const authStatus = z.enum(['none_required', 'ready', 'needs_secret', 'needs_connection', 'needs_authentication', 'reauth_required']);

export const Template = z
  .strictObject({
    key: z.string(),
    title: z.string(),
    tier: z.enum(['global', 'org', 'user']),
    id: uuid.optional().describe('Custom (org or user) templates only.'),
    owner_id: uuid.nullable().optional(),
    updated_at: timestamp.optional(),
    status: z.enum(['draft', 'published']).optional().describe('Custom templates: a `draft` (an import under review) is invisible to agents until published.'),
    description: z.string().optional(),
    category: z.string().optional(),
    runtime,
    hosts: z.array(z.string()),
    auth_methods: z.array(z.strictObject({ name: z.string(), type: z.enum(['apiKey', 'oauth2', 'http']), provider: z.string().optional() })),
    action_count: z.int(),
  })
  .meta({ id: 'Template' });

const Credential = z.union([
  z.strictObject({ type: z.literal('secret'), method: z.string(), secret_name: z.string(), available: z.boolean() }),
  z.strictObject({ type: z.literal('connection'), method: z.string(), provider: z.string(), connection_id: uuid.nullable(), status: z.string().nullable() }),
  z.strictObject({ type: z.literal('none') }),
]);

export const ServiceInstance = z
  .strictObject({
    service: z.string().describe('The instance name callers use as `service`.'),
    template: z.string(),
    tier: z.enum(['global', 'org', 'user']),
    scope: z.enum(['org', 'user', 'implicit']),
    id: uuid.optional(),
    title: z.string(),
    description: z.string().optional(),
    category: z.string().optional(),
    runtime,
    hosts: z.array(z.string()),
    auth_status: authStatus,
    credentials: z.array(Credential),
    action_count: z.int(),
  })
  .meta({ id: 'ServiceInstance' });

export const ActionDescription = z
  .strictObject({
    action: z.string(),
    summary: z.string(),
    summary_template: z.string().describe('The summary with its `{param}` and `[optional]` markup.'),
    description: z.string().optional(),
    method: z.string(),
    path: z.string(),
    risk,
    scope_param: z.string().optional(),
    parameters: z.array(
      z.strictObject({
        name: z.string(),
        in: z.enum(['path', 'query']),
        required: z.boolean(),
        description: z.string().optional(),
        type: z.string().optional(),
        enum: z.array(z.unknown()).optional(),
        default: z.unknown().optional(),
      }),
    ),
    body_schema: z.unknown().optional(),
    headers: z.record(z.string(), z.string()).optional().describe('Fixed headers the action always sends (an API version): declared by the template, never set by a caller.'),
    response_type: z.enum(['json', 'binary']),
    required_scopes: z.array(z.string()),
  })
  .meta({ id: 'ActionDescription' });

export const ServiceDetail = z
  .strictObject({ ...ServiceInstance.shape, actions: z.array(ActionDescription) })
  .meta({ id: 'ServiceDetail' });

export const SearchResult = z
  .strictObject({
    service: z.string(),
    template: z.string(),
    action: z.string(),
    description: z.string(),
    summary: z.string(),
    risk,
    auth_status: authStatus,
    score: z.number(),
  })
  .meta({ id: 'SearchResult' });

export const TemplateSource = z
  .strictObject({ ...Template.shape, source: z.string().describe('The document as YAML (or JSON) text, as submitted when it was text.') })
  .meta({ id: 'TemplateSource' });

export const TemplateList = z.strictObject({ templates: z.array(Template) });
export const ServiceList = z.strictObject({ services: z.array(ServiceInstance) });
export const SearchResults = z.strictObject({ query: z.string(), results: z.array(SearchResult) });

const Skipped = z.strictObject({ method: z.string(), path: z.string(), reason: z.string() });
const ImportWarning = z.strictObject({ message: z.string(), method: z.string().optional(), path: z.string().optional() });

export const ImportReport = z
  .strictObject({
    source_format: z.enum(['swagger-2.0', 'openapi-3.0', 'openapi-3.1']),
    key: z.string(),
    operations: z.int().describe('Operations in the vendor document.'),
    actions: z.int().describe('Actions in the converted template.'),
    skipped: z.array(Skipped).describe('Operations (and webhooks) not mapped, each with its reason.'),
    warnings: z.array(ImportWarning).describe('What was mapped with a change or needs review.'),
  })
  .meta({ id: 'ImportReport' });

const TemplateChanges = z
  .strictObject({
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z.array(z.strictObject({ action: z.string(), fields: z.array(z.string()) })),
  })
  .describe('A re-import: what differs from the template of that key, review edits carried over.');

export const ImportPreview = z
  .strictObject({
    saved: z.literal(false),
    document: z.record(z.string(), z.unknown()).describe('The converted service template (OpenAPI 3.1 with gateway extensions).'),
    report: ImportReport,
    changes: TemplateChanges.optional(),
  })
  .meta({ id: 'ImportPreview' });

export const ImportSaved = z
  .strictObject({ saved: z.literal(true), template: Template, report: ImportReport, changes: TemplateChanges.optional() })
  .meta({ id: 'ImportSaved' });
