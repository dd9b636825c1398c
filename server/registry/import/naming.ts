// Names an import derives (docs/services.md "Importing a vendor's document" states these rules):
// the service key, action names, summaries and the suggested scope_param. Pure.
import { getDomainWithoutSuffix } from 'tldts';

const KEY_MAX = 40;
/** Words that say nothing about which service it is ("GitHub v3 REST API" → "github"). */
const KEY_NOISE = new Set(['api', 'apis', 'rest', 'restful', 'http', 'openapi', 'swagger', 'the', 'web', 'service', 'services', 'public', 'spec', 'specification']);

export function slug(text: string, separator: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator)
    .replace(new RegExp(`^\\${separator}+|\\${separator}+$`, 'g'), '');
}

/**
 * The service key: `requested` as given, else the title without noise words and version tags,
 * else the first server's registrable domain name ("api.stripe.com" → "stripe"), else "imported";
 * then made unique against `taken` with -2, -3, ….
 */
export function serviceKey(title: string | undefined, host: string | undefined, taken: ReadonlySet<string>): string {
  const words = slug(title ?? '', '-')
    .split('-')
    .filter((w) => w !== '' && !KEY_NOISE.has(w) && !/^v\d+(\.\d+)*$/.test(w));
  let base = words.join('-').slice(0, KEY_MAX).replace(/-+$/, '');
  if (base === '' && host) base = slug(getDomainWithoutSuffix(host) ?? host, '-').slice(0, KEY_MAX);
  if (base === '') base = 'imported';
  if (!/^[a-z]/.test(base)) base = `api-${base}`.slice(0, KEY_MAX);
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${base}-${n}`;
  return key;
}

const OPERATION_ID_MAX = 128;

/**
 * The action name: the vendor's operationId with characters a permission key cannot carry
 * turned into `_` ("repos/get" → "repos_get"), else method and path ("GET /users/{id}/keys" →
 * "get_users_id_keys"); unique with _2, _3, ….
 */
export function actionName(operationId: unknown, method: string, path: string, taken: Set<string>): string {
  let base = typeof operationId === 'string' ? operationId.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[^A-Za-z]+/, '') : '';
  if (base === '') base = `${method}_${slug(path, '_') || 'root'}`;
  base = base.slice(0, OPERATION_ID_MAX - 4);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

const SUMMARY_MAX = 160;

/**
 * The summary template: the vendor's summary, else the first sentence of its description, else
 * "METHOD path". Braces that name a parameter stay placeholders, other braces and the summary
 * syntax's brackets become plain text; then every path parameter not yet shown is appended as
 * `({a}, {b})` so an approver sees what the call acts on.
 */
export function summaryTemplate(summary: unknown, description: unknown, method: string, path: string, params: ReadonlySet<string>, pathParams: readonly string[]): string {
  const source = firstText(summary) ?? firstSentence(description) ?? `${method.toUpperCase()} ${path.replace(/[{}]/g, '')}`;
  let text = source
    .replace(/\s+/g, ' ')
    .replace(/\[/g, '(')
    .replace(/\]/g, ')')
    // Kept placeholders are marked so the stray-brace pass below leaves them alone.
    .replace(/\{([^{}]*)\}/g, (whole, name: string) => (params.has(name.trim()) ? `\u0001${name.trim()}\u0002` : name))
    .replace(/[{}]/g, '')
    .replaceAll('\u0001', '{')
    .replaceAll('\u0002', '}')
    .trim();
  if (text.length > SUMMARY_MAX) text = `${text.slice(0, SUMMARY_MAX - 1).replace(/\{[^}]*$/, '').trimEnd()}…`;
  const shown = new Set([...text.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]));
  const missing = pathParams.filter((p) => !shown.has(p));
  if (missing.length > 0) text = `${text} (${missing.map((p) => `{${p}}`).join(', ')})`;
  return text || `${method.toUpperCase()} ${path}`;
}

function firstText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function firstSentence(value: unknown): string | undefined {
  const text = firstText(value);
  if (!text) return undefined;
  const line = text.split(/\n\s*\n/)[0]!.replace(/[#*_`]/g, '').trim();
  const end = line.search(/[.!?](\s|$)/);
  return (end > 0 ? line.slice(0, end) : line) || undefined;
}

/**
 * Names of a resource a permission can bind to: a body or query argument with one of these names
 * is suggested as scope_param when the path names none.
 */
export const RESOURCE_ARGUMENTS = new Set([
  'channel', 'channel_id', 'customer', 'customer_id', 'account', 'account_id', 'repo', 'repository', 'owner', 'org',
  'organization', 'project', 'project_id', 'team', 'team_id', 'workspace', 'workspace_id', 'calendar_id', 'board_id',
  'database_id', 'page_id', 'space', 'space_key', 'site_id', 'user', 'user_id', 'to',
]);

/**
 * The suggested scope_param: the path parameter that names the resource: the last of the first
 * run of consecutive `{param}` segments (`/repos/{owner}/{repo}/issues` → repo, `/customers/
 * {customer}/sources/{id}` → customer); without one, a required query parameter or top-level
 * body property listed in RESOURCE_ARGUMENTS; else none (the permission's arg is `*`).
 */
export function suggestScopeParam(path: string, required: ReadonlyArray<string>): string | undefined {
  const segments = path.split('/');
  let run: string | undefined;
  for (const segment of segments) {
    const m = /^\{([^{}]+)\}$/.exec(segment);
    if (m) run = m[1];
    else if (run !== undefined) break;
  }
  if (run !== undefined) return run;
  return required.find((name) => RESOURCE_ARGUMENTS.has(name));
}
