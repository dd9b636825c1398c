// Data of the secrets page over the typed client. Values go in (create, rotate) and never come
// back: every answer here is metadata.
import { api, unwrap, type components } from '../client.ts';

export type Secret = components['schemas']['Secret'];
export type SecretVersion = components['schemas']['SecretVersion'];
export type ServiceInstance = components['schemas']['ServiceInstance'];

/** Who uses a secret: service instances whose credential names it. */
export interface SecretUse {
  service: string;
  /** `implicit`: the template's default instance; otherwise a named instance. */
  scope: ServiceInstance['scope'];
}

export const listSecrets = async () => (await unwrap(api.GET('/v1/secrets'))).secrets;
export const listVersions = async (id: string) => (await unwrap(api.GET('/v1/secrets/{id}/versions', { params: { path: { id } } }))).versions;

/** Create, or rotate when the name exists (a new version under the same name). */
export const putSecret = (body: { name: string; value: string; description?: string; allowed_hosts?: string[] | null }) =>
  unwrap(api.POST('/v1/secrets', { body }));

export const restoreVersion = (id: string, version: number) =>
  unwrap(api.POST('/v1/secrets/{id}/versions/{version}/restore', { params: { path: { id, version } } }));

export const deleteSecret = (id: string) => unwrap(api.DELETE('/v1/secrets/{id}', { params: { path: { id } } }));

/** Secret name → the instances whose credentials name it. */
export function usesBySecret(instances: readonly ServiceInstance[]): Map<string, SecretUse[]> {
  const out = new Map<string, SecretUse[]>();
  for (const inst of instances) {
    for (const c of inst.credentials) {
      if (c.type !== 'secret') continue;
      const list = out.get(c.secret_name) ?? [];
      if (!list.some((u) => u.service === inst.service)) list.push({ service: inst.service, scope: inst.scope });
      out.set(c.secret_name, list);
    }
  }
  return out;
}

/** Case-insensitive match on name, description and the services that use it. */
export function matches(s: Secret, uses: readonly SecretUse[], q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (!needle) return true;
  return [s.name, s.description ?? '', ...uses.map((u) => u.service)].some((t) => t.toLowerCase().includes(needle));
}
