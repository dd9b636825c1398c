// A template secret read inside a statement the call path already makes (issue 28): the covered
// call's check-and-mark, an approved call's start-and-mark. Which secret is known before any read
// (the instance's credential choices, `chooseCredential`); its envelope comes back with that
// statement and is opened (decrypted) only when the request is planned — once, for that name and
// org; every other read goes to the vault as before.
import { actionOf } from '../server/calls/stored-call.ts';
import { chooseCredential, type ExecutorDeps } from '../server/execution/execute.ts';
import type { StoredRequest } from '../server/execution/stored-request.ts';
import type { ResolvedInstance } from '../server/registry/service.ts';
import { currentEnvelopeJson } from '../server/vault/store.ts';

export interface SecretRead {
  name: string;
  /** The subquery that reads its current envelope, for the statement that carries it. */
  read: ReturnType<typeof currentEnvelopeJson>;
}

/** The template secret this request's credential will read, or null (none, a connection, a disabled action). */
export function templateSecretOf(orgId: string, instance: ResolvedInstance, stored: StoredRequest, actionKey: string): SecretRead | null {
  // A raw request on a connection injects its token, not a template secret.
  if (stored.kind === 'http' && stored.connection) return null;
  let chosen;
  try {
    chosen = chooseCredential(instance.credentials, actionOf(instance, stored, actionKey));
  } catch {
    return null; // a disabled action: the plan says so, with its typed error
  }
  if (chosen.kind !== 'secret') return null;
  const name = chosen.choice.secretName;
  return { name, read: currentEnvelopeJson(orgId, name) };
}

/** The executor with `envelope` served for the secret `name` of `orgId`, once. */
export function withPrefetchedSecret(executor: ExecutorDeps, orgId: string, name: string, envelope: unknown): ExecutorDeps {
  const { openPrefetchedSecret, secretWithBinding } = executor;
  if (!openPrefetchedSecret || !secretWithBinding) return executor;
  let served = false;
  return {
    ...executor,
    secretWithBinding: async (o, n, userId) => {
      if (served || o !== orgId || n !== name) return secretWithBinding(o, n, userId);
      served = true;
      return openPrefetchedSecret(envelope, userId);
    },
  };
}
