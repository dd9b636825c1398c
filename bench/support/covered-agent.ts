// What every call benchmark sets up on its target: the widgets service on the loopback upstream
// (with a disclose filter and a redact path on the benchmarked action, issue 6), its vault key, and
// an agent whose rule covers `get_item`. `json` is the benchmark's own request function.
import { upstreamServiceDoc } from '../../test/support/upstream.ts';

export type JsonRequest = (method: string, path: string, token: string | null, body?: unknown) => Promise<any>;

export async function setUpCoveredAgent(json: JsonRequest, admin: { email: string; password: string }, upstreamUrl: string): Promise<{ adminToken: string; key: string }> {
  const adminToken = (await json('POST', '/v1/auth/login', null, admin)).token as string;
  const doc = upstreamServiceDoc('widgets', upstreamUrl) as any;
  doc.paths['/items/{id}'].get['x-gateway-disclose'] = [{ label: 'Item', filter: '.params.id', max_chars: 40 }];
  doc.paths['/items/{id}'].get['x-gateway-redact'] = ['params.id'];
  await json('POST', '/v1/templates', adminToken, { scope: 'org', document: doc });
  await json('POST', '/v1/secrets', adminToken, { name: 'WIDGETS_KEY', value: 'bench-secret' });
  const agent = await json('POST', '/v1/identities/agents', adminToken, { name: 'bench-agent' });
  await json('POST', `/v1/identities/${agent.identity.id}/rules`, adminToken, { effect: 'allow', pattern: 'widgets:get_item:*' });
  return { adminToken, key: agent.key.token as string };
}
