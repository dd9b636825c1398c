// Edit before approve (issue 31): an approver replaces parts of what the agent asked for. Pure:
// applying the edit to the stored request, the "only narrows" rule over permission keys, and the
// field-level diff a viewer sees (redacted fields show `[REDACTED]` on both sides). Deriving the
// edited request's keys and description is the call path's own (server/calls/service.ts), so an
// edited request is judged exactly like a fresh one.
import { REDACTED } from '../execution/redact.ts';
import { matchesPattern } from '../permissions/patterns.ts';

/** The stored request (server/execution/stored-request.ts), as far as an edit reads it. */
export type EditableRequest =
  | { kind: 'action'; params: Record<string, unknown> }
  | {
      kind: 'http';
      method: string;
      url: string;
      headers?: Record<string, string> | undefined;
      body?: unknown;
      inject?: { secret: string; in: 'header' | 'query'; name: string; prefix?: string | undefined } | undefined;
      connection?: string | undefined;
    };

/** Raw HTTP: each field given replaces the agent's; an omitted one keeps it. */
export interface HttpRequestEdit {
  method?: string | undefined;
  url?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: unknown;
}

/**
 * Service action: the parameters named replace the agent's (a merge), `null` removes one; the
 * result is validated against the action's schema like any call.
 */
export type RequestEdit = { kind: 'params'; params: Record<string, unknown> } | { kind: 'request'; request: HttpRequestEdit };

/** An edit that cannot apply to this request (the API answers 400 naming the field). */
export class RequestEditError extends Error {
  override name = 'RequestEditError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * Headers that carry credentials: the gateway injects them (or the agent sent them, unseen by any
 * person), so an approver can neither type nor see them. They stay as the agent sent them.
 */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'api-key', 'x-auth-token']);

function isCredentialHeader(name: string, req: Extract<EditableRequest, { kind: 'http' }>): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_HEADERS.has(lower) || (req.inject?.in === 'header' && req.inject.name.toLowerCase() === lower);
}

function editedUrl(url: string, req: Extract<EditableRequest, { kind: 'http' }>): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RequestEditError('request.url', 'must be an absolute http(s) URL');
  }
  if (parsed.username || parsed.password) throw new RequestEditError('request.url', 'may not carry credentials (user:password@): the gateway injects them');
  if (req.inject?.in === 'query' && parsed.searchParams.has(req.inject.name)) {
    throw new RequestEditError('request.url', `query parameter ${req.inject.name} is injected by the gateway and cannot be set by an edit`);
  }
  return parsed.toString();
}

function editedHeaders(edit: Record<string, string>, req: Extract<EditableRequest, { kind: 'http' }>): Record<string, string> | undefined {
  const kept = Object.entries(req.headers ?? {}).filter(([name]) => isCredentialHeader(name, req));
  for (const name of Object.keys(edit)) {
    if (isCredentialHeader(name, req)) throw new RequestEditError(`request.headers.${name}`, `header ${name} carries credentials: the gateway injects them, an edit cannot set them`);
  }
  const merged = { ...Object.fromEntries(kept), ...edit };
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** The request the approver allows: the agent's with the edit applied; secrets and connections stay the gateway's. */
export function applyEdit(original: EditableRequest, edit: RequestEdit): EditableRequest {
  if (original.kind === 'action') {
    if (edit.kind !== 'params') throw new RequestEditError('request', 'this call is a service action: edit its params, not a raw request');
    const params: Record<string, unknown> = { ...original.params };
    for (const [name, value] of Object.entries(edit.params)) {
      if (value === null) delete params[name];
      else params[name] = value;
    }
    return { kind: 'action', params };
  }
  if (edit.kind !== 'request') throw new RequestEditError('params', 'this call is a raw HTTP request: edit its request (method, url, headers, body), not params');
  const e = edit.request;
  const next: Extract<EditableRequest, { kind: 'http' }> = { ...original };
  if (e.method !== undefined) next.method = e.method.toUpperCase();
  if (e.url !== undefined) next.url = editedUrl(e.url, original);
  if (e.headers !== undefined) {
    const headers = editedHeaders(e.headers, original);
    if (headers) next.headers = headers;
    else delete next.headers;
  }
  if (e.body !== undefined) {
    const added = addedField(original.body, e.body, 'body');
    if (added) {
      throw new RequestEditError(`request.${added}`, `${added} is not in the agent's request: an edit may change or remove the body's fields, not add one`);
    }
    next.body = e.body;
  }
  return next;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The first field (dotted path under `prefix`) the edited body has and the original does not, or
 * null. A typo such as `amout` would otherwise ride along beside the real field, unseen by the
 * "only narrows" rule (permission keys never look into a body). Objects are compared field by
 * field at every depth; arrays and scalars are values an edit may replace.
 */
export function addedField(original: unknown, edited: unknown, prefix: string): string | null {
  if (!isPlainObject(edited)) return null;
  for (const [name, value] of Object.entries(edited)) {
    const field = `${prefix}.${name}`;
    if (!isPlainObject(original) || !Object.hasOwn(original, name)) return field;
    const deeper = addedField(original[name], value, field);
    if (deeper) return deeper;
  }
  return null;
}

/**
 * "Only narrows": the first edited key that neither one of the original call's exact keys covers
 * nor the resolver could grant (null: the edit stays within what was asked or grantable).
 */
export function wideningKey(originalKeys: readonly string[], editedKeys: readonly string[], grantable: ReadonlySet<string>): string | null {
  for (const key of editedKeys) {
    if (originalKeys.some((o) => o === key || matchesPattern(o, key))) continue;
    if (grantable.has(key)) continue;
    return key;
  }
  return null;
}

/** The edited keys the original call's keys do not cover: the ones the resolver's authority must. */
export function keysBeyondOriginal(originalKeys: readonly string[], editedKeys: readonly string[]): string[] {
  return editedKeys.filter((k) => !originalKeys.some((o) => o === k || matchesPattern(o, k)));
}

/** One changed field: dotted path, the value before and after (absent: the field was added or removed). */
export interface FieldChange {
  field: string;
  before?: unknown;
  after?: unknown;
}

function leaves(value: unknown, prefix: string[], out: Map<string, { path: string[]; value: unknown }>): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, [...prefix, k], out);
    return;
  }
  if (value === undefined) return;
  out.set(prefix.join('.'), { path: prefix, value });
}

/** Whether a dotted path falls under a `redact` path (`*` matches one segment; a prefix hides what is below it). */
export function isHiddenPath(path: readonly string[], hidden: readonly string[]): boolean {
  return hidden.some((h) => {
    const segs = h.split('.');
    return segs.length <= path.length && segs.every((s, i) => s === '*' || s === path[i]);
  });
}

const stable = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (isPlainObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x));

/**
 * Field-level diff of two request projections. Values are compared as sent; a field under a
 * `hidden` path shows `[REDACTED]` on both sides (a viewer learns that it changed, never to what).
 */
export function fieldDiff(before: unknown, after: unknown, hidden: readonly string[] = []): FieldChange[] {
  const a = new Map<string, { path: string[]; value: unknown }>();
  const b = new Map<string, { path: string[]; value: unknown }>();
  leaves(before, [], a);
  leaves(after, [], b);
  const fields = [...new Set([...a.keys(), ...b.keys()])].sort();
  const changes: FieldChange[] = [];
  for (const field of fields) {
    const x = a.get(field);
    const y = b.get(field);
    if (x && y && stable(x.value) === stable(y.value)) continue;
    const secret = isHiddenPath((x ?? y)!.path, hidden);
    changes.push({ field, ...(x ? { before: secret ? REDACTED : x.value } : {}), ...(y ? { after: secret ? REDACTED : y.value } : {}) });
  }
  return changes;
}
