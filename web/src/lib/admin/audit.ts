// Data for the audit page: the filters as URL search parameters (so a view can be shared), one
// page of entries, and the export link (the server streams the whole filtered log).
import { api, unwrap, type components } from '../client.ts';

export type AuditEntry = components['schemas']['AuditEntry'];

export const FILTER_KEYS = ['identity', 'service', 'action', 'event', 'decision', 'since', 'until'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type AuditFilters = Partial<Record<FilterKey, string>>;

/** The filters in a URL's search parameters (unknown parameters are ignored). */
export function filtersFrom(params: { get(name: string): string | null }): AuditFilters {
  const out: AuditFilters = {};
  for (const k of FILTER_KEYS) {
    const v = params.get(k)?.trim();
    if (v) out[k] = v;
  }
  return out;
}

export function searchOf(filters: AuditFilters, extra: Record<string, string> = {}): string {
  const s = new URLSearchParams();
  for (const k of FILTER_KEYS) if (filters[k]) s.set(k, filters[k]);
  for (const [k, v] of Object.entries(extra)) s.set(k, v);
  const text = s.toString();
  return text ? `?${text}` : '';
}

export const listAudit = (filters: AuditFilters, cursor?: string) =>
  unwrap(api.GET('/v1/audit', { params: { query: { ...filters, limit: '50', ...(cursor ? { cursor } : {}) } } }));

/** Where the browser downloads the export of `filters` (same origin; the session cookie goes along). */
export const exportHref = (filters: AuditFilters, format: 'csv' | 'jsonl') => `/v1/audit/export${searchOf(filters, { format })}`;

/** A `datetime-local` value (the browser's zone) as an ISO instant, and back. */
export function localToIso(local: string): string | undefined {
  if (!local) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}
export function isoToLocal(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export const EVENT_KINDS = [
  'call.called', 'call.denied', 'call.failed',
  'approval.raised', 'approval.deduplicated', 'approval.resolved', 'approval.bubbled', 'approval.expired', 'approval.superseded',
  'execution.started', 'execution.executed', 'execution.failed', 'execution.expired', 'execution.cancelled',
  'rule.planted',
  'member.invited', 'member.joined', 'member.updated', 'member.deactivated', 'invitation.revoked', 'sso.configured',
] as const;

/**
 * Every `decision` (outcome) the gateway writes to the log, what it means, and how it reads: good
 * (the call ran or may run), bad (it did not) or neither. The audit filter offers exactly these.
 */
export const OUTCOMES = [
  { value: 'covered', label: 'covered: ran without asking', tone: 'good' },
  { value: 'pending', label: 'pending: approval asked', tone: 'neutral' },
  { value: 'denied', label: 'denied: a deny rule refused it', tone: 'bad' },
  { value: 'allow', label: 'allow: allowed once', tone: 'good' },
  { value: 'allow_remember', label: 'allow_remember: allowed and remembered', tone: 'good' },
  { value: 'deny', label: 'deny: a person denied it', tone: 'bad' },
  { value: 'bubble', label: 'bubble: passed up the chain', tone: 'neutral' },
  { value: 'expire', label: 'expire: nobody decided in time', tone: 'bad' },
  { value: 'supersede', label: 'supersede: replaced by newer requests', tone: 'neutral' },
  { value: 'cancel', label: 'cancel: the approval was cancelled', tone: 'bad' },
  { value: 'executed', label: 'executed: the approved call ran', tone: 'good' },
  { value: 'failed', label: 'failed: the call failed', tone: 'bad' },
  { value: 'outcome_unknown', label: 'outcome_unknown: may have reached the upstream', tone: 'bad' },
  { value: 'cancelled', label: 'cancelled: the execution was cancelled', tone: 'bad' },
  { value: 'expired', label: 'expired: allowed but not run in time', tone: 'bad' },
] as const;
export type OutcomeTone = (typeof OUTCOMES)[number]['tone'];

/** How an entry's outcome reads (an outcome this dashboard does not know reads as neither). */
export const outcomeTone = (decision: string | null): OutcomeTone => OUTCOMES.find((o) => o.value === decision)?.tone ?? 'neutral';

/**
 * The chain of an entry as a person reads it: the user first, then the agent, then its subagents
 * (the log stores it the other way round, the requester first). A name the API did not give (an
 * identity gone) is taken from `nameOf`.
 */
export function chainOf(e: AuditEntry, nameOf: (id: string) => string): { id: string; name: string }[] {
  return e.identity_chain.map((id, i) => ({ id, name: e.identity_chain_names[i] ?? nameOf(id) })).reverse();
}
