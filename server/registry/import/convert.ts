// A vendor's OpenAPI document (3.1, 3.0.x or Swagger 2.0; text or object) → a service template
// the registry loader accepts, and a report of what was mapped, skipped and needs review.
// Parsing, upgrading and dereferencing are libraries' (parse-input.ts, normalize.ts); this
// module decides what each part of the document becomes.
import { mapSecuritySchemes, mapRequirements, isAbsoluteHttp } from './auth.ts';
import { slug, serviceKey } from './naming.ts';
import { isObject, normalizeDocument, type JsonObject, type SourceFormat } from './normalize.ts';
import { fixedValue, mapOperation } from './operation.ts';
import { parseImportInput } from './parse-input.ts';

export interface Skipped {
  method: string;
  path: string;
  reason: string;
}

export interface Warning {
  message: string;
  method?: string;
  path?: string;
}

export interface ImportReport {
  source_format: SourceFormat;
  key: string;
  operations: number;
  actions: number;
  skipped: Skipped[];
  warnings: Warning[];
}

export interface ConvertOptions {
  /** The key to use as is; otherwise one is derived (naming.ts) unique against `takenKeys`. */
  key?: string | undefined;
  takenKeys?: ReadonlySet<string>;
}

/** Placeholder host for a relative or missing server URL: it resolves nowhere, and publish refuses it. */
export const REVIEW_HOST = 'server-url-needs-review.invalid';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
const DESCRIPTION_MAX = 300;

export async function convertDocument(input: unknown, options: ConvertOptions = {}): Promise<{ document: JsonObject; report: ImportReport }> {
  const { format, api } = await normalizeDocument(parseImportInput(input));
  const info = isObject(api['info']) ? api['info'] : {};
  const warnings: Warning[] = [];
  const skipped: Skipped[] = [];

  const { urls: servers, pathSecret } = serverUrls(api, warnings);
  const title = typeof info['title'] === 'string' && info['title'].trim() !== '' ? info['title'].trim().slice(0, 200) : undefined;
  const key = options.key ?? serviceKey(title, hostOf(servers[0]), options.takenKeys ?? new Set());
  const auth = mapSecuritySchemes(api, key);
  warnings.push(...auth.warnings.map((message) => ({ message })));

  const paths: Record<string, JsonObject> = {};
  const names = new Set<string>();
  const claimed = new Map<string, string>();
  let operations = 0;
  for (const [path, item] of Object.entries(isObject(api['paths']) ? api['paths'] : {})) {
    if (!isObject(item)) continue;
    const pathParameters = Array.isArray(item['parameters']) ? item['parameters'] : [];
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      operations += 1;
      const skip = (reason: string): void => void skipped.push({ method: method.toUpperCase(), path, reason });
      if (method === 'options' || method === 'trace') {
        skip(`${method.toUpperCase()} is protocol plumbing, not an action`);
        continue;
      }
      if (!path.startsWith('/') || path.includes('?')) {
        skip('its path is not a plain path template (a query in the path key)');
        continue;
      }
      const fragment = unfixedFragment(path, pathParameters, operation);
      if (fragment !== undefined) {
        skip(`its path key's fragment (#${fragment}) is not a value a declared parameter fixes`);
        continue;
      }
      // `/users/{id}` and `/users/{name}` match the same requests: the first one keeps them.
      const shape = `${method} ${path.replace(/\{[^{}]*\}/g, '{}')}`;
      const first = claimed.get(shape);
      if (first !== undefined) {
        skip(`its path collides with ${method.toUpperCase()} ${first}`);
        continue;
      }
      const result = mapOperation({ method, path, operation, pathParameters, auth, names });
      if (!result.ok) {
        skip(result.reason);
        continue;
      }
      claimed.set(shape, path);
      (paths[path] ??= {})[method] = result.action;
      warnings.push(...result.warnings.map((message) => ({ method: method.toUpperCase(), path, message })));
    }
  }
  for (const name of Object.keys(isObject(api['webhooks']) ? api['webhooks'] : {})) {
    skipped.push({ method: 'WEBHOOK', path: name, reason: 'webhooks are requests the vendor sends, not actions' });
  }

  const inPath = pathSecret ? keyInPath(pathSecret, { key, auth, paths, warnings }) : undefined;
  const security = inPath ? [{ [inPath.scheme]: [] }] : mapRequirements(api['security'], auth);
  const document: JsonObject = {
    openapi: '3.1.0',
    info: {
      title: title ?? key,
      version: typeof info['version'] === 'string' ? info['version'] : String(info['version'] ?? '1'),
      'x-gateway-key': key,
      ...describe(info),
      ...category(info),
    },
    servers: servers.map((url) => ({ url })),
    ...(Object.keys(auth.schemes).length > 0 ? { components: { securitySchemes: auth.schemes } } : {}),
    ...(security ? { security } : {}),
    paths: inPath?.paths ?? paths,
  };
  const report: ImportReport = { source_format: format, key, operations, actions: names.size, skipped, warnings };
  return { document, report };
}

/**
 * APIs.guru tells apart an RPC API's operations on one path by a fragment naming the value that
 * selects each (`/#X-Amz-Target=secretsmanager.CreateSecret`, `/…/#Action=AddPermission`). Such a
 * path key is kept, as the registry keeps Linear's `/graphql#get_issue` (a fragment is never sent),
 * when the operation declares that parameter, required, with exactly that value: the request then
 * carries what the fragment says. Returns the fragment when it does not (the operation is skipped).
 */
function unfixedFragment(path: string, pathParameters: unknown[], operation: JsonObject): string | undefined {
  const at = path.indexOf('#');
  if (at < 0) return undefined;
  const fragment = path.slice(at + 1);
  const eq = fragment.indexOf('=');
  if (eq <= 0) return fragment;
  const [name, value] = [fragment.slice(0, eq), fragment.slice(eq + 1)];
  const declared = [...pathParameters, ...(Array.isArray(operation['parameters']) ? operation['parameters'] : [])].filter(isObject);
  const fixes = declared.some((p) => p['name'] === name && (p['in'] === 'header' || p['in'] === 'query') && p['required'] === true && fixedValue(p) === value);
  return fixes ? undefined : fragment;
}

/**
 * A credential a server URL carries in its path: Telegram's `https://api.telegram.org/bot{token}`,
 * whose variable's default is a sample token. `prefix` is the URL's path with that variable kept.
 */
interface PathSecret {
  variable: string;
  prefix: string;
  description?: string;
}

/** A server variable that names (or is described as) a credential. */
const CREDENTIAL = /token|secret|api[-_ ]?key|password|credential/i;

/**
 * Server URLs with variables at their defaults; relative or missing ones become REVIEW_HOST and a
 * warning. A credential variable in the first server's path is not filled with its sample default:
 * the URL is cut before its path and the variable is handed back (`keyInPath` makes it a secret).
 */
function serverUrls(api: JsonObject, warnings: Warning[]): { urls: string[]; pathSecret?: PathSecret } {
  const servers = Array.isArray(api['servers']) ? api['servers'].filter(isObject) : [];
  const urls: string[] = [];
  let pathSecret: PathSecret | undefined;
  for (const [index, server] of servers.entries()) {
    if (typeof server['url'] !== 'string') continue;
    const variables = isObject(server['variables']) ? server['variables'] : {};
    const secret = index === 0 ? credentialInPath(server['url'], variables) : undefined;
    const raw = secret ? server['url'].slice(0, server['url'].length - secret.prefix.length) : server['url'];
    const fill = (text: string) =>
      text.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
        const variable = variables[name];
        return isObject(variable) && variable['default'] !== undefined ? String(variable['default']) : whole;
      });
    const url = fill(raw);
    if (isAbsoluteHttp(url) && !/[{}]/.test(url)) {
      const clean = url.replace(/\/+$/, '');
      if (!urls.includes(clean)) urls.push(clean);
      if (secret) pathSecret = { ...secret, prefix: secret.prefix.replace(/\{([^{}]+)\}/g, (whole, name: string) => (name === secret.variable ? whole : fill(whole))).replace(/\/+$/, '') };
    } else {
      warnings.push({ message: `server URL ${JSON.stringify(server['url'])} is not an absolute http(s) URL: set the base URL in review` });
    }
  }
  if (urls.length > 0) return { urls, ...(pathSecret ? { pathSecret } : {}) };
  const relative = servers.map((s) => s['url']).find((u): u is string => typeof u === 'string' && u.startsWith('/'));
  if (servers.length === 0) warnings.push({ message: 'the document names no server: set the base URL in review' });
  return { urls: [`https://${REVIEW_HOST}${relative && !/[{}]/.test(relative) ? relative.replace(/\/+$/, '') : ''}`] };
}

/** The one credential variable in a server URL's path (after its host), with the path from there on. */
function credentialInPath(url: string, variables: JsonObject): PathSecret | undefined {
  const hostEnd = url.indexOf('/', url.indexOf('://') + 3);
  if (url.indexOf('://') < 0 || hostEnd < 0) return undefined;
  const path = url.slice(hostEnd);
  const found = [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!).filter((name) => {
    const v = variables[name];
    const description = isObject(v) && typeof v['description'] === 'string' ? v['description'] : '';
    return CREDENTIAL.test(name) || CREDENTIAL.test(description);
  });
  if (found.length !== 1 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(found[0]!)) return undefined;
  const v = variables[found[0]!];
  const description = isObject(v) && typeof v['description'] === 'string' ? v['description'] : undefined;
  return { variable: found[0]!, prefix: path, ...(description ? { description: description.slice(0, 300) } : {}) };
}

/**
 * The server's path credential as the registry sends one (`x-gateway-path_param`): every action's
 * path gains the server's path prefix with the placeholder, and one apiKey scheme fills it from the
 * vault as the request leaves. Not when the document declares its own auth schemes or an action
 * has a parameter of that name: then the base URL keeps the placeholder out and review sets it.
 */
function keyInPath(secret: PathSecret, at: { key: string; auth: ReturnType<typeof mapSecuritySchemes>; paths: Record<string, JsonObject>; warnings: Warning[] }): { scheme: string; paths: Record<string, JsonObject> } | undefined {
  const placeholder = `{${secret.variable}}`;
  const clash = Object.values(at.paths).some((item) =>
    Object.values(item).some((action) => isObject(action) && Array.isArray(action['parameters']) && action['parameters'].some((p) => isObject(p) && p['name'] === secret.variable)),
  );
  if (Object.keys(at.auth.schemes).length > 0 || clash) {
    at.warnings.push({ message: `the server URL carries the credential ${placeholder} in its path, beside ${clash ? 'a parameter of that name' : 'the auth schemes the document declares'}: set the base URL and the key in review` });
    return undefined;
  }
  const scheme = `${slug(secret.variable, '_')}_in_path`;
  const secretName = `${at.key}_${secret.variable}`.toUpperCase().replace(/[^A-Z0-9]+/g, '_').slice(0, 128);
  at.auth.schemes[scheme] = {
    type: 'apiKey',
    // OpenAPI's apiKey has no `in: path`: `in`/`name` are what the format requires, `path_param` is where the key goes.
    in: 'query',
    name: secret.variable,
    'x-gateway-path_param': secret.variable,
    'x-gateway-default_secret_name': secretName,
    ...(secret.description ? { description: secret.description } : {}),
  };
  at.warnings.push({ message: `the server URL carries the credential ${placeholder} in its path: it is sent from the vault secret ${secretName}, never the document's sample value` });
  return { scheme, paths: Object.fromEntries(Object.entries(at.paths).map(([path, item]) => [`${secret.prefix}${path}`, item])) };
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const host = new URL(url).hostname;
  return host === REVIEW_HOST ? undefined : host;
}

function describe(info: JsonObject): JsonObject {
  const text = typeof info['description'] === 'string' ? info['description'].split(/\n\s*\n/)[0]!.replace(/\s+/g, ' ').trim() : '';
  if (text === '') return {};
  return { description: text.length > DESCRIPTION_MAX ? `${text.slice(0, DESCRIPTION_MAX - 1)}…` : text };
}

function category(info: JsonObject): JsonObject {
  const categories = info['x-apisguru-categories'];
  const first = Array.isArray(categories) ? categories.find((c) => typeof c === 'string') : undefined;
  return first ? { 'x-gateway-category': slug(first, '_') } : {};
}
