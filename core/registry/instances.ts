// Service instances: a name callers use as `service`, bound to a template and credentials.
// Every visible template is also an implicit instance named by its key, so a template needs no
// setup to be callable; an explicit instance of the same name takes precedence. Pure.
import type { CompiledService } from './types.ts';

export type AuthStatus = 'none_required' | 'ready' | 'needs_secret' | 'needs_connection' | 'needs_authentication' | 'reauth_required';

export interface InstanceBinding {
  name: string;
  templateKey: string;
  /** Overrides the template's default secret name for apiKey / bearer methods. */
  secretName: string | null;
  /** Binds a specific OAuth connection; else the caller's connection for the provider. */
  connectionId: string | null;
  scope: 'org' | 'user' | 'implicit';
  id: string | null;
}

export interface CredentialContext {
  secretNames: ReadonlySet<string>;
  /** The caller's user's connections (any status but revoked), oldest first. */
  connections: ReadonlyArray<{ id: string; provider: string; status: string }>;
}

export type CredentialChoice =
  | { type: 'none' }
  | { type: 'secret'; method: string; secretName: string; available: boolean }
  | { type: 'connection'; method: string; provider: string; connectionId: string | null; status: string | null };

/** What each auth method of the service would use for this instance, in document order. */
export function credentialChoices(service: CompiledService, binding: InstanceBinding, ctx: CredentialContext): CredentialChoice[] {
  if (service.authMethods.length === 0) return [{ type: 'none' }];
  return service.authMethods.map((m): CredentialChoice => {
    if (m.type === 'oauth2') {
      const conn = binding.connectionId
        ? ctx.connections.find((c) => c.id === binding.connectionId)
        : ctx.connections.find((c) => c.provider === m.provider && c.status === 'active') ?? ctx.connections.find((c) => c.provider === m.provider);
      return { type: 'connection', method: m.name, provider: m.provider, connectionId: conn?.id ?? binding.connectionId, status: conn?.status ?? null };
    }
    const secretName = binding.secretName ?? m.defaultSecretName;
    return { type: 'secret', method: m.name, secretName, available: ctx.secretNames.has(secretName) };
  });
}

function statusOf(choice: CredentialChoice): AuthStatus {
  switch (choice.type) {
    case 'none':
      return 'none_required';
    case 'secret':
      return choice.available ? 'ready' : 'needs_secret';
    case 'connection':
      if (choice.status === 'active') return 'ready';
      if (choice.status === 'pending') return 'needs_authentication';
      if (choice.status === 'reauth_required') return 'reauth_required';
      return 'needs_connection';
  }
}

/** Ready when any method is ready (the executor then uses that one); else the first problem. */
export function authStatus(choices: readonly CredentialChoice[]): AuthStatus {
  const statuses = choices.map(statusOf);
  if (statuses.includes('none_required')) return 'none_required';
  if (statuses.includes('ready')) return 'ready';
  return statuses[0] ?? 'none_required';
}

/** What an action lacks to run for an instance: a vault secret, or an (authorized) connection. */
export type CredentialGap =
  | { kind: 'secret'; secretName: string }
  | {
      kind: 'connection';
      provider: string;
      connectionId: string | null;
      status: string | null;
      requiredScopes: readonly string[];
      /** A vault secret that would do as well (another auth method of the service). */
      orSecret?: string;
    };

/**
 * Null when the action can run with one of the instance's credentials (or needs none); otherwise
 * what is missing: a connection waiting for (re)authorization first (one click fixes it), else
 * the first auth method the action accepts, in the service document's order (its author's
 * preference). The action's own security schemes narrow the methods.
 */
export function credentialGap(choices: readonly CredentialChoice[], action: { securitySchemes?: readonly string[] | undefined; requiredScopes: readonly string[] }): CredentialGap | null {
  if (choices.some((c) => c.type === 'none')) return null;
  const allowed = action.securitySchemes;
  const usable = choices.filter((c): c is Exclude<CredentialChoice, { type: 'none' }> => c.type !== 'none' && (!allowed || allowed.includes(c.method)));
  if (usable.length === 0 || usable.some((c) => statusOf(c) === 'ready')) return null; // none accepted: the executor says so
  const waiting = usable.find((c) => c.type === 'connection' && c.connectionId !== null && (c.status === 'pending' || c.status === 'reauth_required'));
  const first = waiting ?? usable[0]!;
  if (first.type === 'secret') return { kind: 'secret', secretName: first.secretName };
  const secret = usable.find((c) => c.type === 'secret');
  return {
    kind: 'connection',
    provider: first.provider,
    connectionId: first.connectionId,
    status: first.status,
    requiredScopes: action.requiredScopes,
    ...(secret?.type === 'secret' ? { orSecret: secret.secretName } : {}),
  };
}

/** Explicit instances plus one implicit instance per template key not already taken. */
export function visibleInstances(explicit: readonly InstanceBinding[], templateKeys: readonly string[]): InstanceBinding[] {
  const byName = new Map<string, InstanceBinding>();
  // User-owned first so they shadow org-owned instances of the same name.
  for (const b of [...explicit].sort((a, b) => (a.scope === b.scope ? 0 : a.scope === 'user' ? -1 : 1))) {
    if (!byName.has(b.name)) byName.set(b.name, b);
  }
  for (const key of templateKeys) {
    if (!byName.has(key)) byName.set(key, { name: key, templateKey: key, secretName: null, connectionId: null, scope: 'implicit', id: null });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
