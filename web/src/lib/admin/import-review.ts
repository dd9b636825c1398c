// Reviewing an imported draft: the template's text (YAML as stored) read into one row per action
// — enabled, risk, scope_param, summary — and the reviewer's edits written back into that text.
// Edits go through the YAML document model, so everything else (comments, disclose/redact added
// in the editor, the order of keys) stays as it was. Pure: text in, text out.
import { isMap, isScalar, isSeq, parseDocument, type Document, type YAMLMap } from 'yaml';

export type Risk = 'read' | 'write' | 'delete';
export const RISKS: readonly Risk[] = ['read', 'write', 'delete'];

export interface ReviewAction {
  /** The operationId: the action's name. */
  action: string;
  method: string;
  path: string;
  summary: string;
  risk: Risk;
  /** '' when none. */
  scopeParam: string;
  enabled: boolean;
  /** Names scope_param may take: path and query parameters, then top-level JSON body properties. */
  candidates: string[];
}

export interface ReviewState {
  title: string;
  /** The first server's URL ('' when the document has none). */
  serverUrl: string;
  actions: ReviewAction[];
}

export type ReviewEdit = Pick<ReviewAction, 'action' | 'summary' | 'risk' | 'scopeParam' | 'enabled'>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'];

/** The registry accepts three spellings of an extension (core/registry/aliases.ts); canonical first. */
function spellings(name: string): string[] {
  return [...new Set([`x-gateway-${name}`, `x-gateway-${name.replaceAll('_', '-')}`, name])];
}

function readExt(op: YAMLMap, name: string): unknown {
  for (const key of spellings(name)) if (op.has(key)) return op.get(key);
  return undefined;
}

/** Writes the canonical spelling only (two spellings on one operation would be `ambiguous_alias`). */
function writeExt(op: YAMLMap, name: string, value: unknown): void {
  const [canonical, ...others] = spellings(name);
  for (const key of others) op.delete(key);
  if (value === undefined) op.delete(canonical);
  else op.set(canonical, value);
}

const riskOfMethod = (method: string): Risk => (method === 'get' || method === 'head' ? 'read' : method === 'delete' ? 'delete' : 'write');
const asString = (v: unknown): string => (typeof v === 'string' ? v : '');

function parameterNames(...lists: unknown[]): string[] {
  const names: string[] = [];
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (p && typeof p === 'object' && typeof p.name === 'string' && (p.in === 'path' || p.in === 'query')) names.push(p.name);
    }
  }
  return names;
}

function bodyProperties(op: Record<string, unknown>): string[] {
  const content = (op.requestBody as { content?: Record<string, { schema?: { properties?: object } }> } | undefined)?.content;
  if (!content) return [];
  return Object.values(content).flatMap((media) => Object.keys(media?.schema?.properties ?? {}));
}

function parse(source: string): Document {
  const doc = parseDocument(source, { prettyErrors: false });
  if (doc.errors.length > 0) throw new Error(`the template does not parse: ${doc.errors[0]!.message}`);
  return doc;
}

/** Every operation of the document as [path, method, its map]. */
function operations(doc: Document): Array<[string, string, YAMLMap]> {
  const out: Array<[string, string, YAMLMap]> = [];
  const paths = doc.get('paths');
  if (!isMap(paths)) return out;
  for (const pair of paths.items) {
    const path = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!isMap(pair.value)) continue;
    for (const method of METHODS) {
      const op = pair.value.get(method);
      if (isMap(op)) out.push([path, method, op]);
    }
  }
  return out;
}

export function readReview(source: string): ReviewState {
  const doc = parse(source);
  const plain = (doc.toJS() ?? {}) as { info?: { title?: unknown }; servers?: Array<{ url?: unknown }>; paths?: Record<string, Record<string, unknown>> };
  const actions = operations(doc).map(([path, method, op]): ReviewAction => {
    const raw = plain.paths?.[path]?.[method] as Record<string, unknown>;
    const risk = readExt(op, 'risk');
    const names = [...parameterNames(plain.paths?.[path]?.parameters, raw.parameters), ...bodyProperties(raw)];
    return {
      action: asString(op.get('operationId')),
      method: method.toUpperCase(),
      path,
      summary: asString(op.get('summary')),
      risk: RISKS.includes(risk as Risk) ? (risk as Risk) : riskOfMethod(method),
      scopeParam: asString(readExt(op, 'scope_param')),
      enabled: readExt(op, 'disabled') !== true,
      candidates: [...new Set(names)],
    };
  });
  return { title: asString(plain.info?.title), serverUrl: asString(plain.servers?.[0]?.url), actions };
}

/**
 * The document text with the reviewer's choices: a disabled action gets `x-gateway-disabled: true`
 * (an enabled one loses the key), risk, scope_param (removed when empty) and summary per action,
 * and the first server's URL. Actions not named in `edits` are left alone.
 */
export function applyReview(source: string, edits: ReviewEdit[], serverUrl?: string): string {
  const doc = parse(source);
  const byAction = new Map(edits.map((e) => [e.action, e]));
  for (const [, , op] of operations(doc)) {
    const edit = byAction.get(asString(op.get('operationId')));
    if (!edit) continue;
    writeExt(op, 'disabled', edit.enabled ? undefined : true);
    writeExt(op, 'risk', edit.risk);
    writeExt(op, 'scope_param', edit.scopeParam.trim() || undefined);
    if (edit.summary.trim()) op.set('summary', edit.summary.trim());
  }
  if (serverUrl !== undefined && serverUrl.trim()) {
    const servers = doc.get('servers');
    if (isSeq(servers) && isMap(servers.items[0])) servers.items[0].set('url', serverUrl.trim());
    else doc.set('servers', doc.createNode([{ url: serverUrl.trim() }]));
  }
  return doc.toString({ lineWidth: 0 });
}
