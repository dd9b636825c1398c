// SQL for connected MCP servers and their tools (migrations/0027).
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

type Db = CommonQueryMethods;

const json = z.record(z.string(), z.unknown());

export const serverRow = z.object({
  id: z.string(),
  org_id: z.string(),
  owner_id: z.string().nullable(),
  name: z.string(),
  url: z.string(),
  auth: json,
  template_id: z.string(),
  timeout_ms: z.number().nullable(),
  refreshed_at: z.date(),
  created_by: z.string().nullable(),
  created_at: z.date(),
});
export type ServerRow = z.infer<typeof serverRow>;

export const toolRow = z.object({
  server_id: z.string(),
  name: z.string(),
  action_key: z.string(),
  summary: z.string(),
  pinned: json,
  current: json,
  status: z.enum(['active', 'new', 'removed']),
  override: json,
});
export type ToolRow = z.infer<typeof toolRow>;

export const listServers = (db: Db, orgId: string, userId: string) =>
  db.any(sql.type(serverRow)`
    SELECT * FROM mcp_servers WHERE org_id = ${orgId} AND (owner_id IS NULL OR owner_id = ${userId}) ORDER BY name, owner_id NULLS FIRST`);

/** Every connected server with the user behind its creator's identity (the watcher acts as them). */
export const listWatchable = (db: Db) =>
  db.any(sql.type(serverRow.extend({ creator_user_id: z.string().nullable() }))`
    SELECT s.*, i.user_id AS creator_user_id
    FROM mcp_servers s LEFT JOIN identities i ON i.id = s.created_by
    ORDER BY s.created_at, s.id`);

export const getServer = (db: Db, id: string) => db.maybeOne(sql.type(serverRow)`SELECT * FROM mcp_servers WHERE id = ${id}`);

export const insertServer = (
  db: Db,
  s: { orgId: string; ownerId: string | null; name: string; url: string; auth: unknown; timeoutMs: number | null; templateId: string; createdBy: string },
) =>
  db.one(sql.type(serverRow)`
    INSERT INTO mcp_servers (org_id, owner_id, name, url, auth, timeout_ms, template_id, created_by)
    VALUES (${s.orgId}, ${s.ownerId}, ${s.name}, ${s.url}, ${sql.jsonb(s.auth as never)}, ${s.timeoutMs}, ${s.templateId}, ${s.createdBy})
    RETURNING *`);

export const setTimeoutMs = (db: Db, id: string, timeoutMs: number | null) =>
  db.one(sql.type(serverRow)`UPDATE mcp_servers SET timeout_ms = ${timeoutMs} WHERE id = ${id} RETURNING *`);

export async function markRefreshed(db: Db, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE mcp_servers SET refreshed_at = now() WHERE id = ${id}`);
}

export async function deleteServer(db: Db, id: string): Promise<void> {
  // The generated template goes with it (its tools cascade from the server).
  await db.query(sql.unsafe`DELETE FROM service_templates WHERE id = (SELECT template_id FROM mcp_servers WHERE id = ${id})`);
}

export const listTools = (db: Db, serverId: string) =>
  db.any(sql.type(toolRow)`SELECT * FROM mcp_server_tools WHERE server_id = ${serverId} ORDER BY name`);

export async function upsertTool(db: Db, t: Omit<ToolRow, 'override'> & { override?: Record<string, unknown> }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO mcp_server_tools (server_id, name, action_key, summary, pinned, current, status, override)
    VALUES (${t.server_id}, ${t.name}, ${t.action_key}, ${t.summary}, ${sql.jsonb(t.pinned as never)}, ${sql.jsonb(t.current as never)}, ${t.status},
            ${sql.jsonb((t.override ?? {}) as never)})
    ON CONFLICT (server_id, name) DO UPDATE SET action_key = EXCLUDED.action_key, summary = EXCLUDED.summary, pinned = EXCLUDED.pinned,
      current = EXCLUDED.current, status = EXCLUDED.status, override = EXCLUDED.override`);
}
