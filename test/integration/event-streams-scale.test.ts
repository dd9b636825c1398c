// The people's event stream with many open dashboards (issue 46): 50 streams of one org's admins,
// each a session of its own, all receive an approval's event exactly once; and when an event
// reaches every stream of a process at once, the streams' judgement of their viewers (who may see
// it now) is one database read, not one per stream. Not a timing test (npm run bench:streams
// times 500 streams).
import { sql, type DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabasePool } from '../../server/db/pool.ts';
import { createEventService, type UserEvent } from '../../server/events/service.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedSignedInPeople } from '../support/signed-in-people.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

const STREAMS = 50;

describe('many open event streams', () => {
  let gw: TestGateway;
  let up: Upstream;
  let orgId: string;
  let agentKey: string;
  const streams: SseStream[] = [];

  const raise = async (name: string): Promise<string> => {
    const res = await gw.as(agentKey)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status).toBe(202);
    return res.body.approval_id as string;
  };

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_streams_test' })).status).toBe(201);
    const agent = await admin('POST', '/v1/identities/agents', { name: 'streams-bot' });
    expect(agent.status).toBe(201);
    agentKey = agent.body.key.token;
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await gw?.stop();
    await up?.close();
  });

  it(`delivers an approval to each of ${STREAMS} open streams exactly once`, async () => {
    for (const { token } of await seedSignedInPeople(gw.databaseUrl, orgId, STREAMS)) {
      streams.push(await openSse(`${gw.url}/v1/events`, { authorization: `Bearer ${token}` }));
    }
    for (const s of streams) {
      expect(s.status).toBe(200);
      await s.waitFor((e) => e.event === 'ready');
    }
    const first = await raise('to-fifty');
    // A second approval after it: each stream delivers in order, so once the second is there a
    // repeat of the first would have arrived already.
    const second = await raise('and-another');
    for (const s of streams) await s.waitFor((e) => e.event === 'approval.raised' && e.data.approval_id === second);
    for (const s of streams) {
      expect(s.events.filter((e) => e.event === 'approval.raised' && e.data.approval_id === first)).toHaveLength(1);
      expect(s.events.filter((e) => e.event === 'approval.raised' && e.data.approval_id === second)).toHaveLength(1);
    }
  });

  it('judges every stream\'s viewer for an event with one read, each by who they are now', async () => {
    const admins = await seedSignedInPeople(gw.databaseUrl, orgId, STREAMS - 2);
    const [member, gone] = await seedSignedInPeople(gw.databaseUrl, orgId, 2, 'member');
    const approvalId = await raise('judged');
    const ownerId = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body.identity.id as string;
    const pool = await createDatabasePool(gw.databaseUrl);
    let reads = 0;
    try {
      await pool.query(sql.unsafe`UPDATE identities SET status = 'archived' WHERE id = ${gone!.userId}`);
      // The real pool, its statements counted.
      const counted = new Proxy(pool, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            reads++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      }) as DatabasePool;
      const events = createEventService({ pool: counted });
      const event: UserEvent = { id: '1', org_id: orgId, user_id: ownerId, type: 'approval.raised', data: { approval_id: approvalId } };
      const viewers = [...admins.map((a) => a.userId), member!.userId, gone!.userId];
      // As the hub hands an event to each stream: all in one turn.
      const judged = await Promise.all(viewers.map((userId) => events.deliverable({ orgId, userId }, [event])));
      expect(reads).toBe(1);
      judged.slice(0, admins.length).forEach((j) => expect(j).toEqual({ role: 'admin', events: [event] }));
      // A member sees only approvals of their own chain; an archived person no longer sees anything.
      expect(judged[admins.length]).toEqual({ role: 'member', events: [] });
      expect(judged[admins.length + 1]).toEqual({ role: null, events: [] });
      // The same viewer asked about from another org is no viewer there.
      expect(await events.deliverable({ orgId: '00000000-0000-4000-8000-000000000000', userId: admins[0]!.userId }, [event])).toEqual({ role: null, events: [] });
    } finally {
      await pool.end();
    }
  });
});
