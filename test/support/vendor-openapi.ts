// Checks a compiled built-in service against the vendor's own published OpenAPI 3 document:
// each action's method and full URL path (server path + action path, path parameters compared by
// position, not by name) must be an operation of the document, the vendor's required path and
// query parameters must be there, every query parameter the template sends must be one the
// vendor declares, and the template's hosts must be servers of the document. Pure: the caller
// loads both documents.

import type { CompiledAction, CompiledService } from '../../core/registry/types.ts';

type Json = Record<string, unknown>;

export interface VendorDocument {
  servers?: { url: string; variables?: Record<string, { default?: string }> }[];
  paths: Record<string, Json>;
  components?: Json;
}

/** A known difference between one action (or `*`: every action) and the document, with its reason. */
export interface VendorException {
  reason: string;
  /** The operation is missing from the document (e.g. the document is an older, partial copy). */
  absent?: boolean;
  /** Query parameters the template sends that the document does not declare. */
  undeclaredQuery?: string[];
  /** Query parameters the document marks required that the template leaves out. */
  notRequired?: string[];
}

export interface VendorCheckOptions {
  /** Hosts the template uses that the document names differently, each with the vendor's reason. */
  hostAliases?: Record<string, { documentHost: string; reason: string }>;
  exceptions?: Record<string, VendorException>;
  /** A documented respelling of the document's paths, e.g. OData-qualified action names. */
  documentPaths?: { from: RegExp; to: string; reason: string };
  /** A prefix of the template's paths the document's server URL stands for, e.g. Atlassian's /ex/jira/{cloudId}. */
  templatePrefix?: { pattern: RegExp; reason: string };
}

export interface ActionProblem {
  action: string;
  problem: string;
}

interface VendorParam {
  name: string;
  in: string;
  required: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** `{owner}` and `{+name}` both become `{}`: only the position of a path parameter matters. */
export function normalisePath(path: string): string {
  const collapsed = path.replace(/\{[^}]*\}/g, '{}').replace(/\/{2,}/g, '/');
  return collapsed.length > 1 ? collapsed.replace(/\/+$/, '') : collapsed;
}

/** A server URL with its variables at their defaults, split into host and path. */
function serverParts(server: { url: string; variables?: Record<string, { default?: string }> }): { host: string; path: string } {
  // Keep a variable that sits inside the path as a placeholder (Telegram's `/bot{token}`).
  const [origin, ...rest] = server.url.split(/(?<=[^/:])\/(?=[^/])/);
  const host = (origin ?? '').replace(/\{(\w+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? name);
  const url = new URL(host);
  return { host: url.hostname.toLowerCase(), path: `${url.pathname.replace(/\/$/, '')}/${rest.join('/')}` };
}

function localRef(doc: VendorDocument, value: unknown): Json | undefined {
  let current = value as Json | undefined;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 10; hops++) {
    const ref = current.$ref as string;
    if (!ref.startsWith('#/')) return undefined;
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) target = (target as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    current = target as Json | undefined;
  }
  return current;
}

function vendorParams(doc: VendorDocument, pathItem: Json, operation: Json): VendorParam[] {
  const byKey = new Map<string, VendorParam>();
  for (const raw of [...((pathItem.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]) {
    const p = localRef(doc, raw);
    if (!p || typeof p.name !== 'string' || typeof p.in !== 'string') continue;
    byKey.set(`${p.in}:${p.name}`, { name: p.name, in: p.in, required: p.required === true || p.in === 'path' });
  }
  return [...byKey.values()];
}

/** Every operation of the document, keyed by `METHOD normalised-full-path`. */
export function indexOperations(doc: VendorDocument, rewrite?: VendorCheckOptions['documentPaths']): Map<string, VendorParam[]> {
  const index = new Map<string, VendorParam[]>();
  const servers = (doc.servers?.length ? doc.servers : [{ url: 'https://invalid' }]).map(serverParts);
  for (const [path, rawItem] of Object.entries(doc.paths)) {
    const item = localRef(doc, rawItem) ?? {};
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const params = vendorParams(doc, item, operation);
      const spelled = rewrite ? path.replace(rewrite.from, rewrite.to) : path;
      for (const server of servers) index.set(`${method.toUpperCase()} ${normalisePath(server.path + spelled)}`, params);
    }
  }
  return index;
}

export function documentHosts(doc: VendorDocument): string[] {
  return [...new Set((doc.servers ?? []).map((s) => serverParts(s).host))];
}

function actionPath(service: CompiledService, action: CompiledAction, prefix?: RegExp): string {
  const base = new URL(service.baseUrls[0] ?? 'https://invalid').pathname.replace(/\/$/, '');
  const full = base + action.pathTemplate;
  return normalisePath(prefix ? full.replace(prefix, '') : full);
}

/** What is wrong with the service against the document; empty when every action matches. */
export function checkAgainstVendor(service: CompiledService, doc: VendorDocument, options: VendorCheckOptions = {}): ActionProblem[] {
  const problems: ActionProblem[] = [];
  const hosts = documentHosts(doc);
  for (const host of service.hosts) {
    const alias = options.hostAliases?.[host];
    if (!hosts.includes(host) && !(alias && hosts.includes(alias.documentHost))) {
      problems.push({ action: '*', problem: `host ${host} is not a server of the vendor document (${hosts.join(', ')})` });
    }
  }
  const index = indexOperations(doc, options.documentPaths);
  const used = new Set<string>();
  const excused = (action: string, kind: 'absent' | 'undeclaredQuery' | 'notRequired', param?: string): boolean => {
    for (const key of [action, '*']) {
      const exception = options.exceptions?.[key];
      const value = exception?.[kind];
      const hit = kind === 'absent' ? value === true : Array.isArray(value) && param !== undefined && value.includes(param);
      if (hit) {
        used.add(`${key}:${kind}:${param ?? ''}`);
        return true;
      }
    }
    return false;
  };
  for (const action of service.actions.values()) {
    const key = `${action.method} ${actionPath(service, action, options.templatePrefix?.pattern)}`;
    const params = index.get(key);
    if (!params) {
      if (!excused(action.key, 'absent')) problems.push({ action: action.key, problem: `${key} is not an operation of the vendor document` });
      continue;
    }
    const ours = new Map(action.parameters.map((p) => [p.name, p]));
    for (const p of params) {
      if (p.in !== 'query' || !p.required) continue;
      const mine = ours.get(p.name);
      if ((!mine || (!mine.required && mine.schema.raw.default === undefined)) && !excused(action.key, 'notRequired', p.name)) {
        problems.push({ action: action.key, problem: `the vendor requires query parameter '${p.name}'` });
      }
    }
    const declared = new Set(params.filter((p) => p.in === 'query').map((p) => p.name));
    for (const p of action.parameters) {
      if (p.in === 'query' && !declared.has(p.name) && !excused(action.key, 'undeclaredQuery', p.name)) {
        problems.push({ action: action.key, problem: `query parameter '${p.name}' is not declared by the vendor` });
      }
    }
  }
  // An exception nothing needs any more is stale: it would hide the next real difference.
  for (const [key, exception] of Object.entries(options.exceptions ?? {})) {
    const listed = [
      ...(exception.absent ? [`${key}:absent:`] : []),
      ...(exception.undeclaredQuery ?? []).map((p) => `${key}:undeclaredQuery:${p}`),
      ...(exception.notRequired ?? []).map((p) => `${key}:notRequired:${p}`),
    ];
    for (const entry of listed) if (!used.has(entry)) problems.push({ action: key, problem: `exception ${entry} is not needed` });
  }
  return problems;
}
