// Vendor security schemes → the gateway's auth methods. apiKey (header/query) keeps its place;
// http bearer/basic become an apiKey on Authorization with the matching prefix; oauth2 with an
// authorization-code flow keeps its URLs and scopes, its provider key being the service key.
// Everything else (cookie keys, mutual TLS, OpenID Connect discovery, other OAuth flows) is
// reported, not mapped. Pure.
import { isObject, type JsonObject } from './normalize.ts';

export interface AuthMapping {
  schemes: Record<string, JsonObject>;
  /** oauth2 scheme name → the scopes it declares; other mapped schemes → undefined. */
  scopes: Map<string, Set<string> | undefined>;
  warnings: string[];
}

export function mapSecuritySchemes(api: JsonObject, serviceKey: string): AuthMapping {
  const components = isObject(api['components']) ? api['components'] : {};
  const source = isObject(components['securitySchemes']) ? components['securitySchemes'] : {};
  const out: AuthMapping = { schemes: {}, scopes: new Map(), warnings: [] };
  const secretPrefix = serviceKey.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  const secretNames = new Set<string>();
  const secretName = (suffix: string, scheme: string): string => {
    let name = `${secretPrefix}_${suffix}`;
    if (secretNames.has(name)) name = `${secretPrefix}_${scheme.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;
    secretNames.add(name);
    return name.slice(0, 128);
  };
  for (const [name, raw] of Object.entries(source)) {
    if (!isObject(raw)) continue;
    const mapped = mapScheme(name, raw, serviceKey, secretName);
    if (typeof mapped === 'string') {
      out.warnings.push(`auth scheme '${name}' is not mapped: ${mapped}`);
      continue;
    }
    out.schemes[name] = mapped;
    const flow = isObject(mapped['flows']) ? mapped['flows']['authorizationCode'] : undefined;
    out.scopes.set(name, isObject(flow) && isObject(flow['scopes']) ? new Set(Object.keys(flow['scopes'])) : undefined);
    if (raw['type'] === 'http' && String(raw['scheme']).toLowerCase() === 'basic') {
      out.warnings.push(`auth scheme '${name}' (HTTP basic): the secret ${String(mapped['x-gateway-default_secret_name'])} must hold base64("user:password")`);
    }
  }
  return out;
}

type SecretName = (suffix: string, scheme: string) => string;

/** The mapped scheme, or why it cannot be mapped. */
function mapScheme(name: string, scheme: JsonObject, serviceKey: string, secretName: SecretName): JsonObject | string {
  const description = typeof scheme['description'] === 'string' ? { description: scheme['description'].slice(0, 500) } : {};
  switch (scheme['type']) {
    case 'apiKey': {
      const where = scheme['in'];
      if (where !== 'header' && where !== 'query') return `an API key in ${String(where)} cannot be sent by the gateway`;
      if (typeof scheme['name'] !== 'string' || scheme['name'] === '') return 'the API key has no name';
      return { type: 'apiKey', in: where, name: scheme['name'], 'x-gateway-default_secret_name': secretName('API_KEY', name), ...description };
    }
    case 'http': {
      const kind = String(scheme['scheme']).toLowerCase();
      if (kind === 'bearer') return { type: 'apiKey', in: 'header', name: 'Authorization', 'x-gateway-prefix': 'Bearer ', 'x-gateway-default_secret_name': secretName('TOKEN', name), ...description };
      if (kind === 'basic') return { type: 'apiKey', in: 'header', name: 'Authorization', 'x-gateway-prefix': 'Basic ', 'x-gateway-default_secret_name': secretName('BASIC_AUTH', name), ...description };
      return `HTTP ${kind} authentication is not supported`;
    }
    case 'oauth2': {
      const flows = isObject(scheme['flows']) ? scheme['flows'] : {};
      const code = flows['authorizationCode'];
      if (!isObject(code)) return `only the OAuth authorization-code flow is supported (found ${Object.keys(flows).join(', ') || 'none'})`;
      for (const field of ['authorizationUrl', 'tokenUrl']) {
        if (!isAbsoluteHttp(code[field])) return `its ${field} is not an absolute http(s) URL`;
      }
      const scopes = isObject(code['scopes']) ? code['scopes'] : {};
      return {
        type: 'oauth2',
        'x-gateway-provider': serviceKey,
        flows: { authorizationCode: { authorizationUrl: code['authorizationUrl'], tokenUrl: code['tokenUrl'], scopes } },
        ...description,
      };
    }
    case 'openIdConnect':
      return 'OpenID Connect discovery is not supported (add the provider’s OAuth URLs in review)';
    case 'mutualTLS':
      return 'mutual TLS is not supported';
    default:
      return `type ${JSON.stringify(scheme['type'])} is not supported`;
  }
}

/**
 * An operation's (or the document's) security requirements with only mapped schemes and their
 * declared scopes; undefined when nothing of it could be mapped.
 */
export function mapRequirements(security: unknown, auth: AuthMapping): JsonObject[] | undefined {
  if (!Array.isArray(security)) return undefined;
  const out: JsonObject[] = [];
  for (const req of security) {
    if (!isObject(req)) continue;
    const names = Object.keys(req);
    if (names.length === 0) {
      out.push({});
      continue;
    }
    if (!names.every((n) => auth.scopes.has(n))) continue;
    const mapped: JsonObject = {};
    for (const n of names) {
      const declared = auth.scopes.get(n);
      const asked = Array.isArray(req[n]) ? (req[n] as unknown[]).filter((s): s is string => typeof s === 'string') : [];
      mapped[n] = declared ? asked.filter((s) => declared.has(s)) : [];
    }
    out.push(mapped);
  }
  return out.length > 0 ? out : undefined;
}

export function isAbsoluteHttp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}
