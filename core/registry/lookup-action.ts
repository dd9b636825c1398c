// A parameter's `resolve.get` is a GET on the service's own server. When that GET is also one of
// the service's actions, the lookup is a read the caller may be permitted on its own: this finds
// that action and the values of its path parameters, so its permission key can be checked. Pure.
import type { CompiledAction, CompiledService } from './types.ts';

const segments = (path: string) => path.split('?')[0]!.split('/').filter(Boolean);
const placeholder = (seg: string) => /^\{([^}]+)\}$/.exec(seg)?.[1]?.trim();

/**
 * The GET action whose path template has the lookup's shape (same literal segments, a parameter
 * wherever the lookup has a placeholder), with its path parameters bound from `params`; null when
 * no action matches or a placeholder has no value.
 */
export function lookupAction(
  service: CompiledService,
  get: string,
  params: Readonly<Record<string, unknown>>,
): { action: CompiledAction; params: Record<string, unknown> } | null {
  const want = segments(get);
  for (const action of service.actions.values()) {
    if (action.method !== 'GET' || action.disabled) continue;
    const have = segments(action.pathTemplate);
    if (have.length !== want.length) continue;
    const bound: Record<string, unknown> = {};
    const fits = have.every((seg, i) => {
      const w = want[i]!;
      const actionParam = placeholder(seg);
      const lookupParam = placeholder(w);
      if (actionParam === undefined || lookupParam === undefined) return actionParam === undefined && lookupParam === undefined && seg === w;
      const value = params[lookupParam];
      if (value === undefined || value === null || value === '') return false;
      bound[actionParam] = value;
      return true;
    });
    if (fits) return { action, params: bound };
  }
  return null;
}
