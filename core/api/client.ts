// The typed REST client: openapi-fetch over the types generated from GET /v1/openapi.json
// (`npm run gen:api`). Paths, parameters, bodies and answers are checked by TypeScript.
//
//   import { createClient } from '../core/api/client.ts';
//   const api = createClient({ baseUrl: 'http://localhost:8080', token: 'gws_…' });
//   const { data, error, response } = await api.GET('/v1/approvals/{id}', { params: { path: { id } } });
//   // data: components['schemas']['Approval'] on 200; error: the error envelope otherwise
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';
export type ApiClient = Client<paths>;

export interface ApiClientOptions {
  /** The gateway's origin, e.g. `http://localhost:8080`; '' for same-origin (the dashboard). */
  baseUrl: string;
  /** A session token (`gws_…`), agent key (`osk_…`) or OAuth access token; omit to rely on the session cookie. */
  token?: string;
  fetch?: typeof globalThis.fetch;
}

export function createClient(opts: ApiClientOptions): ApiClient {
  return createFetchClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    ...(opts.token ? { headers: { authorization: `Bearer ${opts.token}` } } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
