// SQL for custom templates and service instances.
import { prepared } from '../db/prepared.ts';
import { sql, type CommonQueryMethods, type FragmentSqlToken as SqlFragment } from 'slonik';
import { z } from 'zod';

type Db = CommonQueryMethods;

export const templateRow = z.object({
  id: z.string(),
  org_id: z.string(),
  owner_id: z.string().nullable(),
  key: z.string(),
  title: z.string(),
  // YAML/JSON text is kept as sent (comments and order survive for the editor); objects as JSON.
  document: z.union([z.record(z.string(), z.unknown()), z.string()]),
  // `draft`: an import under review, invisible to agents until an admin publishes it.
  status: z.enum(['draft', 'published']),
  created_by: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type TemplateRow = z.infer<typeof templateRow>;

export const instanceRow = z.object({
  id: z.string(),
  org_id: z.string(),
  owner_id: z.string().nullable(),
  name: z.string(),
  template_key: z.string(),
  secret_name: z.string().nullable(),
  connection_id: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type InstanceRow = z.infer<typeof instanceRow>;

/** A template row without its document: what resolving and listing need while the compiled copy is cached. */
export const templateHeadRow = templateRow.omit({ document: true });
export type TemplateHead = z.infer<typeof templateHeadRow>;

/**
 * Templates visible to a user's tree (the org's and the user's own), without their documents: a
 * search or a call resolves every template, and an org's documents can be megabytes; a document
 * is read only when its version is not compiled yet (resolver.ts).
 */
export const listTemplateHeads = (db: Db, orgId: string, userId: string) =>
  db.any(sql.type(templateHeadRow)`
    SELECT id, org_id, owner_id, key, title, status, created_by, created_at, updated_at
    FROM service_templates WHERE org_id = ${orgId} AND (owner_id IS NULL OR owner_id = ${userId}) ORDER BY key, owner_id NULLS FIRST`);

export const getTemplate = (db: Db, id: string) => db.maybeOne(sql.type(templateRow)`SELECT * FROM service_templates WHERE id = ${id}`);

export type TemplateStatus = TemplateRow['status'];

export const insertTemplate = (
  db: Db,
  t: { orgId: string; ownerId: string | null; key: string; title: string; document: unknown; createdBy: string; status?: TemplateStatus },
) =>
  db.one(sql.type(templateRow)`
    INSERT INTO service_templates (org_id, owner_id, key, title, document, created_by, status)
    VALUES (${t.orgId}, ${t.ownerId}, ${t.key}, ${t.title}, ${sql.jsonb(t.document as never)}, ${t.createdBy}, ${t.status ?? 'published'})
    RETURNING *`);

/** A re-import: the new document replaces the old one and waits for review again. */
export const replaceWithDraft = (db: Db, id: string, t: { title: string; document: unknown }) =>
  db.one(sql.type(templateRow)`
    UPDATE service_templates SET title = ${t.title}, document = ${sql.jsonb(t.document as never)}, status = 'draft', updated_at = now()
    WHERE id = ${id} RETURNING *`);

export const publishTemplate = (db: Db, id: string) =>
  db.one(sql.type(templateRow)`
    UPDATE service_templates SET status = 'published', updated_at = now() WHERE id = ${id} RETURNING *`);

export const updateTemplate = (db: Db, id: string, t: { key: string; title: string; document: unknown }) =>
  db.one(sql.type(templateRow)`
    UPDATE service_templates SET key = ${t.key}, title = ${t.title}, document = ${sql.jsonb(t.document as never)}, updated_at = now()
    WHERE id = ${id} RETURNING *`);

/** The name of the connected MCP server (server/mcp-servers) whose tools a template is generated from, if any. */
export const generatingMcpServer = (db: Db, templateId: string) =>
  db.maybeOneFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM mcp_servers WHERE template_id = ${templateId}`);

export async function deleteTemplate(db: Db, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM service_templates WHERE id = ${id}`);
}

export const listInstances = (db: Db, orgId: string, userId: string) =>
  db.any(sql.type(instanceRow)`
    SELECT * FROM service_instances WHERE org_id = ${orgId} AND (owner_id IS NULL OR owner_id = ${userId}) ORDER BY name`);

export const insertInstance = (
  db: Db,
  i: { orgId: string; ownerId: string | null; name: string; templateKey: string; secretName: string | null; connectionId: string | null; createdBy: string },
) =>
  db.one(sql.type(instanceRow)`
    INSERT INTO service_instances (org_id, owner_id, name, template_key, secret_name, connection_id, created_by)
    VALUES (${i.orgId}, ${i.ownerId}, ${i.name}, ${i.templateKey}, ${i.secretName}, ${i.connectionId}, ${i.createdBy})
    RETURNING *`);

export async function deleteInstance(db: Db, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM service_instances WHERE id = ${id}`);
}

/** Names of the org's live vault secrets (for auth status; values never read here). */
export const orgSecretNames = async (db: Db, orgId: string): Promise<Set<string>> =>
  new Set(
    await db.anyFirst(sql.type(z.object({ name: z.string() }))`
      SELECT name FROM secrets WHERE org_id = ${orgId} AND deleted_at IS NULL AND current_version > 0`),
  );

export const connectionStatusRow = z.object({ id: z.string(), provider: z.string(), status: z.string(), owner_id: z.string(), org_id: z.string() });

/** The user's usable connections and the org's connection rows by id (for instance binding). */
export const userConnections = (db: Db, orgId: string, userId: string) =>
  db.any(sql.type(connectionStatusRow)`
    SELECT id, provider, status, owner_id, org_id FROM connections
    WHERE org_id = ${orgId} AND owner_id = ${userId} AND status <> 'revoked' ORDER BY created_at`);

export const getConnection = (db: Db, id: string) =>
  db.maybeOne(sql.type(connectionStatusRow)`SELECT id, provider, status, owner_id, org_id FROM connections WHERE id = ${id}`);

export const instanceLookupRow = z.object({
  instances: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      template_key: z.string(),
      secret_name: z.string().nullable(),
      connection_id: z.string().nullable(),
      owner_id: z.string().nullable(),
    }),
  ),
  templates: z.array(z.object({ id: z.string(), key: z.string(), owner_id: z.string().nullable(), updated_ms: z.number() })),
  secret_names: z.array(z.string()),
  connections: z.array(z.object({ id: z.string(), provider: z.string(), status: z.string() })),
});
export type InstanceLookup = z.infer<typeof instanceLookupRow>;

/**
 * Everything needed to resolve ONE instance name for a user's tree, as one JSON value: explicit
 * instances of that name, the custom templates it may bind to (ids and versions only: documents
 * are compiled once and cached), the org's live secret names and the user's connections. `org` and
 * `user` are SQL expressions: values here, or columns of the statement it rides along with (an
 * agent key's authentication, server/auth/service.ts).
 */
export const instanceLookupValue = (org: SqlFragment, user: SqlFragment, name: string) => sql.fragment`
  (WITH named AS (
     SELECT id, name, template_key, secret_name, connection_id, owner_id FROM service_instances
     WHERE org_id = ${org} AND (owner_id IS NULL OR owner_id = ${user}) AND name = ${name})
   SELECT json_build_object(
     'instances', COALESCE((SELECT json_agg(named) FROM named), '[]'),
     'templates', COALESCE((
       SELECT json_agg(json_build_object('id', t.id, 'key', t.key, 'owner_id', t.owner_id,
                                         'updated_ms', floor(extract(epoch FROM t.updated_at) * 1000)))
       FROM service_templates t
       WHERE t.org_id = ${org} AND (t.owner_id IS NULL OR t.owner_id = ${user}) AND t.status = 'published'
         AND (t.key = ${name} OR t.key IN (SELECT template_key FROM named))), '[]'),
     'secret_names', COALESCE((SELECT json_agg(name) FROM secrets WHERE org_id = ${org} AND deleted_at IS NULL AND current_version > 0), '[]'),
     'connections', COALESCE((
       SELECT json_agg(json_build_object('id', id, 'provider', provider, 'status', status) ORDER BY created_at)
       FROM connections WHERE org_id = ${org} AND owner_id = ${user} AND status <> 'revoked'), '[]')))`;

const lookupColumn = z.object({ lookup: instanceLookupRow });

export async function instanceLookup(db: Db, orgId: string, userId: string, name: string): Promise<InstanceLookup> {
  const row = await db.one(prepared(sql.type(lookupColumn)`
    SELECT ${instanceLookupValue(sql.fragment`${orgId}::uuid`, sql.fragment`${userId}::uuid`, name)} AS lookup`));
  return row.lookup;
}
