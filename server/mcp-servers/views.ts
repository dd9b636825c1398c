// How connected MCP servers' rows read: as the records the generated template is built from
// (core/mcp-servers/definition.ts), and as the API shows a server and its tools (a tool's effective
// risk and state, and the diff of a changed tool against its published pin).
import { effectiveRisk, toolEnabled, type ServerRecord, type ToolOverride, type ToolRecord, type UpstreamAuth } from '../../core/mcp-servers/definition.ts';
import { pinDiff, pinHash, riskFromAnnotations, type ToolPin } from '../../core/mcp-servers/tools.ts';
import type * as store from './store.ts';

export const toolRecord = (row: store.ToolRow): ToolRecord => ({
  name: row.name,
  key: row.action_key,
  summary: row.summary,
  pinned: row.pinned as unknown as ToolPin,
  annotationRisk: riskFromAnnotations((row.pinned as unknown as ToolPin).annotations ?? undefined),
  status: row.status,
  override: row.override as ToolOverride,
});

export const serverRecord = (row: store.ServerRow): ServerRecord => ({ name: row.name, url: row.url, auth: row.auth as unknown as UpstreamAuth, timeoutMs: row.timeout_ms });

function toolView(row: store.ToolRow) {
  const t = toolRecord(row);
  const current = row.current as unknown as ToolPin;
  const changed = pinHash(current) !== pinHash(t.pinned);
  return {
    name: t.name,
    action: t.key,
    summary: t.summary,
    status: t.status,
    enabled: toolEnabled(t),
    risk: effectiveRisk(t),
    annotation_risk: t.annotationRisk,
    ...(t.override.scope_param ? { scope_param: t.override.scope_param } : {}),
    override: t.override,
    changed,
    ...(changed ? { changes: pinDiff(t.pinned, current) } : {}),
  };
}

export function serverView(row: store.ServerRow, tools: readonly store.ToolRow[]) {
  const auth = row.auth as unknown as UpstreamAuth;
  return {
    id: row.id,
    name: row.name,
    service: row.name,
    url: row.url,
    scope: row.owner_id ? ('user' as const) : ('org' as const),
    auth,
    timeout_ms: row.timeout_ms,
    template_id: row.template_id,
    refreshed_at: row.refreshed_at.toISOString(),
    created_at: row.created_at.toISOString(),
    tools: tools.map(toolView),
  };
}
