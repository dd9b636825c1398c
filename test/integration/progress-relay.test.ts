// The end of a call relayed with progress (server/mcp/progress.ts): its answer may arrive (through
// Temporal) before the tool's last progress (through PostgreSQL NOTIFY). Stopping the relay first lets
// through everything NOTIFYed before the stop: a real hub on a real PostgreSQL, no gateway around it.
import { randomUUID } from 'node:crypto';
import type { Notification } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { AGENT_EVENTS_CHANNEL, createAgentEventHub, notifyCallProgress, type AgentEventHub } from '../../server/events/agent-events.ts';
import { notifyChannel } from '../../server/events/store.ts';
import { createLogger } from '../../server/logger.ts';
import { relayProgress } from '../../server/mcp/progress.ts';

describe('stopping a progress relay when the call is answered', () => {
  let pool: DatabasePool;
  let hub: AgentEventHub;
  const logger = createLogger('silent');

  beforeAll(async () => {
    pool = await createDatabasePool(inject('pgAdminUrl'));
    hub = createAgentEventHub({ connectionUri: inject('pgAdminUrl'), logger });
  });
  afterAll(async () => {
    await pool?.end();
  });

  const relay = async (agentId: string, requestId: string) => {
    const sent: Notification[] = [];
    const stop = await relayProgress(hub, { agentId, requestId, progressToken: 'tok' }, async (n) => void sent.push(n), logger);
    return { sent, stop };
  };

  it('relays every progress committed before the stop, in order, even when the stop comes at once', async () => {
    for (let round = 0; round < 5; round++) {
      const [agentId, requestId] = [randomUUID(), randomUUID()];
      const { sent, stop } = await relay(agentId, requestId);
      for (const progress of [1, 2, 3]) await notifyCallProgress(pool, { requesterId: agentId, requestId }, { progress, total: 3 }, logger);
      await stop();
      expect(sent.map((n) => n.params)).toEqual([1, 2, 3].map((progress) => ({ progressToken: 'tok', progress, total: 3 })));
    }
  });

  it("relays only the request's own progress, and nothing after the stop", async () => {
    const [agentId, requestId] = [randomUUID(), randomUUID()];
    const { sent, stop } = await relay(agentId, requestId);
    await notifyCallProgress(pool, { requesterId: agentId, requestId: 'another request' }, { progress: 1 }, logger);
    await notifyCallProgress(pool, { requesterId: randomUUID(), requestId }, { progress: 1 }, logger);
    await notifyCallProgress(pool, { requesterId: agentId, requestId }, { progress: 2 }, logger);
    await stop();
    await notifyCallProgress(pool, { requesterId: agentId, requestId }, { progress: 3 }, logger);
    // Another stop on the same hub fences after the late one: had it been relayed, it would be here.
    await (await relay(randomUUID(), randomUUID())).stop();
    expect(sent.map((n) => n.params)).toEqual([{ progressToken: 'tok', progress: 2 }]);
  });

  it("ignores another replica's fence and answers a malformed event by dropping it", async () => {
    const [agentId, requestId] = [randomUUID(), randomUUID()];
    const { sent, stop } = await relay(agentId, requestId);
    await notifyChannel(pool, AGENT_EVENTS_CHANNEL, JSON.stringify({ fence: randomUUID() }));
    await notifyChannel(pool, AGENT_EVENTS_CHANNEL, '{not json');
    await notifyCallProgress(pool, { requesterId: agentId, requestId }, { progress: 5 }, logger);
    await stop();
    expect(sent.map((n) => n.params)).toEqual([{ progressToken: 'tok', progress: 5 }]);
  });
});
