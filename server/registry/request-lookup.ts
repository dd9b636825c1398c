// The call path's instance lookup, read in the same statement as the agent key that authenticated
// the request (server/auth/service.ts, AuthRideAlong) and handed on in that request's ReadAlong
// (server/auth/read-along.ts): the call resolves its service without a statement of its own. A
// snapshot of the same moment as the chain the call is checked with.
import type { AuthRideAlong } from '../auth/service.ts';
import { instanceLookupRow, instanceLookupValue, type InstanceLookup } from './store.ts';

/**
 * What an instance name or a template key can look like. Anything else rides along nothing: the
 * call then validates and resolves it on its own, as it always did (a NUL byte, say, is refused as
 * invalid_request before any statement could choke on it).
 */
const LOOKUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/**
 * The lookup of the service a request names, to ride along its authentication (or another
 * statement: an allow's, activities/execution-steps.ts); undefined: none. `keep` puts what was read
 * in the request's ReadAlong; `read` parses it for a caller that hands it on itself.
 */
export function instanceLookupAlong(name: unknown): (AuthRideAlong & { read: (value: unknown) => InstanceLookup }) | undefined {
  if (typeof name !== 'string' || !LOOKUP_NAME.test(name)) return undefined;
  const read = (value: unknown) => instanceLookupRow.parse(value);
  return {
    sql: (org, user) => instanceLookupValue(org, user, name),
    read,
    keep: (along, value) => {
      along.instance = { name, lookup: read(value) };
    },
  };
}
