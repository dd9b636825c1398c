// The audit export's two line formats, pure: CSV (RFC 4180, one row per entry, a header first)
// and JSON Lines (one entry object per line, exactly what GET /v1/audit returns per entry).

export interface ExportEntry {
  id: number;
  at: string;
  event: string;
  org_id: string;
  user_id: string | null;
  user_name: string | null;
  actor_id: string | null;
  actor_name: string | null;
  identity_chain: string[];
  identity_chain_names: (string | null)[];
  service: string | null;
  action: string | null;
  permission_keys: string[];
  decision: string | null;
  call_id: string | null;
  approval_id: string | null;
  execution_id: string | null;
  http_status_code: number | null;
  details: Record<string, unknown>;
  request_id: string | null;
}

export type ExportFormat = 'csv' | 'jsonl';

export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

export const CSV_COLUMNS = [
  'id', 'at', 'event', 'user_id', 'user_name', 'actor_id', 'actor_name', 'identity_chain', 'identity_chain_names',
  'service', 'action', 'permission_keys', 'decision', 'call_id', 'approval_id', 'execution_id', 'http_status_code',
  'request_id', 'details',
] as const;

/**
 * One CSV field. Quoted when it holds a separator, quote or line break. A text starting with
 * `= + - @`, tab or CR is prefixed with `'` so a spreadsheet shows it instead of running it as a
 * formula (the values come from agents and upstreams, so they are not trusted).
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let s = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

/**
 * Lists of ids and keys are joined with a space (UUIDs and permission keys hold none); the chain's
 * names, which may hold spaces, are a JSON array like `details`.
 */
export function csvLine(e: ExportEntry): string {
  const cells: (string | number | null)[] = [
    e.id, e.at, e.event, e.user_id, e.user_name, e.actor_id, e.actor_name, e.identity_chain.join(' '), JSON.stringify(e.identity_chain_names),
    e.service, e.action, e.permission_keys.join(' '), e.decision, e.call_id, e.approval_id, e.execution_id, e.http_status_code,
    e.request_id, JSON.stringify(e.details),
  ];
  return `${cells.map(csvField).join(',')}\r\n`;
}

export function jsonLine(e: ExportEntry): string {
  return `${JSON.stringify(e)}\n`;
}

/** `audit-<filters>-<when>.csv`: a file name that says what it holds; only safe characters. */
export function exportFileName(format: ExportFormat, filters: Record<string, string | undefined>, now: Date): string {
  const parts = Object.entries(filters)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}-${String(v).replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 40)}`);
  const stamp = now.toISOString().replace(/[:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${['audit', ...parts, stamp].join('_')}.${format}`;
}
