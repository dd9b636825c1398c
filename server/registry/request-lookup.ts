// The call path's instance lookup, read in the same statement as the agent key that authenticated
// the request (server/auth/service.ts, AuthRideAlong) and kept for that request only: the call
// resolves its service without a statement of its own. Keyed by the Principal object the
// middleware created, as the request's chain is (server/auth/request-chain.ts): it lives as long as
// the request, and a principal built for anyone else (a spread copy, a stored call's viewer) never
// finds it. A snapshot of the same moment as the chain the call is checked with.
import type { AuthRideAlong } from '../auth/service.ts';
import type { Viewer } from './service.ts';
import { instanceLookupRow, instanceLookupValue, type InstanceLookup } from './store.ts';

const kept = new WeakMap<object, { name: string; lookup: InstanceLookup }>();

/**
 * What an instance name or a template key can look like. Anything else rides along nothing: the
 * call then validates and resolves it on its own, as it always did (a NUL byte, say, is refused as
 * invalid_request before any statement could choke on it).
 */
const LOOKUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/**
 * The lookup of the service a request names, to ride along its authentication (or another
 * statement: an allow's, activities/execution-steps.ts); undefined: none. `keep` keeps what was read
 * for that principal; `read` parses it for a caller that hands it on itself.
 */
export function instanceLookupAlong(name: unknown): (AuthRideAlong & { read: (value: unknown) => InstanceLookup }) | undefined {
  if (typeof name !== 'string' || !LOOKUP_NAME.test(name)) return undefined;
  const read = (value: unknown) => instanceLookupRow.parse(value);
  return {
    sql: (org, user) => instanceLookupValue(org, user, name),
    read,
    keep: (p, value) => {
      kept.set(p, { name, lookup: read(value) });
    },
  };
}

/** What was read of `name` with `p`'s authentication, if anything. */
export function keptInstanceLookup(p: Viewer, name: string): InstanceLookup | undefined {
  const hit = kept.get(p);
  return hit?.name === name ? hit.lookup : undefined;
}
