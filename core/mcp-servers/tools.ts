// An upstream MCP server's tools as gateway actions. Pure: no I/O.
//   - action keys: the tool name with characters a permission-key segment cannot hold replaced
//     by `_`; two tools that land on the same key (case-insensitively) are refused, never merged.
//   - risk from the tool's annotations, with the defaults the MCP specification gives them:
//     readOnlyHint (default false) true → read; else destructiveHint (default true) → delete,
//     destructiveHint false → write. Annotations are the server's hints: an admin override wins.
//   - pins: what people approved is the tool's description, input schema and annotations; a
//     pin is their canonical-JSON SHA-256, and a diff names which of the three changed.
import { createHash } from 'node:crypto';

export type Risk = 'read' | 'write' | 'delete';

/** A tool as `tools/list` describes it (the fields the gateway reads). */
export interface UpstreamTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; [k: string]: unknown };
}

/** The pinned part of a tool: what an approver read. */
export interface ToolPin {
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
}

export const PINNED_FIELDS = ['description', 'input_schema', 'annotations'] as const;
export type PinnedField = (typeof PINNED_FIELDS)[number];

export function pinOf(tool: UpstreamTool): ToolPin {
  return { description: tool.description ?? null, input_schema: tool.inputSchema, annotations: tool.annotations ?? null };
}

/** JSON with object keys sorted, so equal values hash equally whatever order the server sent. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function pinHash(pin: ToolPin): string {
  return createHash('sha256').update(canonicalJson(pin)).digest('hex');
}

/** What changed between the pinned tool and the one the server lists now: field → {pinned, current}. */
export function pinDiff(pinned: ToolPin, current: ToolPin): Partial<Record<PinnedField, { pinned: unknown; current: unknown }>> {
  const diff: Partial<Record<PinnedField, { pinned: unknown; current: unknown }>> = {};
  for (const field of PINNED_FIELDS) {
    if (canonicalJson(pinned[field]) !== canonicalJson(current[field])) diff[field] = { pinned: pinned[field], current: current[field] };
  }
  return diff;
}

export function riskFromAnnotations(annotations: UpstreamTool['annotations']): Risk {
  if (annotations?.readOnlyHint === true) return 'read';
  return annotations?.destructiveHint === false ? 'write' : 'delete';
}

/** A tool name as an action key (a permission-key segment: `^[A-Za-z][A-Za-z0-9_.-]*$`, at most 128). */
export function actionKeyFor(toolName: string): string {
  const replaced = toolName.replace(/[^A-Za-z0-9_.-]/g, '_');
  return (/^[A-Za-z]/.test(replaced) ? replaced : `t_${replaced}`).slice(0, 128);
}

export interface KeyedTool {
  tool: UpstreamTool;
  key: string;
}

export type KeyingResult = { ok: true; tools: KeyedTool[] } | { ok: false; collisions: { key: string; tools: string[] }[] };

/** Keys every tool; names that collide after normalising are listed (nothing is keyed then). */
export function keyTools(tools: readonly UpstreamTool[]): KeyingResult {
  const byKey = new Map<string, string[]>();
  for (const t of tools) {
    const k = actionKeyFor(t.name).toLowerCase();
    byKey.set(k, [...(byKey.get(k) ?? []), t.name]);
  }
  const collisions = [...byKey.entries()].filter(([, names]) => names.length > 1).map(([key, names]) => ({ key, tools: names }));
  if (collisions.length > 0) return { ok: false, collisions };
  return { ok: true, tools: tools.map((tool) => ({ tool, key: actionKeyFor(tool.name) })) };
}

/** One line people read for the action: the tool's title, else its description's first sentence. */
export function toolSummary(tool: UpstreamTool): string {
  const source = tool.title ?? tool.annotations?.title ?? tool.description?.split(/(?<=\.)\s/)[0] ?? tool.name;
  // Braces and brackets are summary-template syntax; a tool's text is shown as written.
  const plain = source.replace(/[{[]/g, '(').replace(/[}\]]/g, ')').replace(/\s+/g, ' ').trim() || tool.name;
  return plain.length > 200 ? `${plain.slice(0, 199)}…` : plain;
}
