// GET /v1/events: Server-Sent Events for people signed in to the dashboard. Each event carries its
// id; a client that reconnects with Last-Event-ID (header, or `last_event_id` for a fresh
// EventSource) gets what it missed, or a `gap` event telling it to refetch.
import type { StreamGuard } from '../auth/stream-guard.ts';
import type { Router } from 'express';
import { z } from 'zod';
import { requireHuman } from '../auth/middleware.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { apiRouter } from '../http/api-router.ts';
import { writeOrEnd } from '../http/stream-write.ts';
import type { UserEventHub } from './hub.ts';
import type { EventScope, EventService, UserEvent } from './service.ts';
import { sameStanding } from './visibility.ts';

/** Backlog sent on resume; a client further behind gets a `gap` instead. */
export const MAX_BACKLOG = 500;
const HEARTBEAT_MS = 20_000;

const eventId = z.string().regex(/^\d{1,18}$/, 'must be the id of an event this stream sent').transform(BigInt);
const query = z.strictObject({ last_event_id: eventId.optional() });

function frame(e: UserEvent): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ id: e.id, type: e.type, ...e.data })}\n\n`;
}

export function eventRoutes(deps: { events: EventService; hub: UserEventHub; guard: StreamGuard }): Router {
  const r = apiRouter({ tags: ['Events'] });
  r.route({
    method: 'get',
    path: '/events',
    operationId: 'streamEvents',
    summary: 'Server-Sent Events about approvals for a signed-in person (resumable with Last-Event-ID)',
    description:
      'Events: approval.raised, approval.resolved, approval.bubbled, approval.executed, approval.execution_failed, approval.expired; ' +
      'plus `ready` (caught up) and `gap` (events since Last-Event-ID are no longer kept: refetch). Members see their own chain, admins the org.',
    auth: 'human',
    query,
    responses: {
      200: {
        description: 'An event stream that stays open; the schema describes one event of it',
        contentType: 'text/event-stream',
        // One Server-Sent Event (OpenAPI 3.1 has no stream type; tools such as schemathesis check each event).
        schema: z.object({
          event: z.string().optional(),
          data: z.string(),
          id: z.string().optional(),
          retry: z.number().int().optional(),
        }),
      },
    },
    errors: ['forbidden', 'invalid_request'],
  }, async (req, res, { query }) => {
    const p = requireHuman(req);
    const header = req.get('last-event-id');
    const lastId = header !== undefined && header !== '' ? eventId.parse(header) : query.last_event_id;
    const scope: EventScope = { orgId: p.orgId, userId: isAdmin(p) ? null : p.userId };
    // HEAD (Express routes it here): the stream's headers, answered at once instead of a stream.
    if (req.method === 'HEAD') {
      res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-store' }).end();
      return;
    }

    // Subscribe before reading the backlog, and hold live events until it is out, so nothing
    // falls between the two; ids already sent are skipped. Every event is judged against the
    // viewer as they are at its delivery (visibility.ts): a role or routing change since the
    // stream opened counts, and a change of standing (admin or not) ends the stream so its client
    // reconnects in its new scope.
    const openedAsAdmin = isAdmin(p);
    const viewer = { orgId: p.orgId, userId: p.userId };
    let sent = lastId ?? 0n;
    let held: UserEvent[] | null = [];
    let closed = false;
    const cleanup: Array<() => void> = [];
    const end = () => {
      if (closed) return;
      closed = true;
      for (const undo of cleanup.splice(0)) undo();
      if (!res.writableEnded) res.end();
    };
    let delivering: Promise<void> = Promise.resolve();
    /** Sends, in order, what the viewer may receive now (one read of the viewer per batch). */
    const deliver = (events: UserEvent[]): Promise<void> =>
      (delivering = delivering.then(async () => {
        const unsent = events.filter((e) => BigInt(e.id) > sent);
        if (closed || unsent.length === 0) return;
        let judged: Awaited<ReturnType<EventService['deliverable']>>;
        try {
          judged = await deps.events.deliverable(viewer, unsent);
        } catch (err) {
          // Not knowing who the viewer is now sends nothing: the client reconnects and resumes.
          req.log.warn({ err: (err as Error).message }, 'could not judge an event for its stream');
          return end();
        }
        if (judged.role !== undefined && !sameStanding(openedAsAdmin, judged.role)) return end();
        for (const e of judged.events) {
          if (closed || BigInt(e.id) <= sent) continue;
          sent = BigInt(e.id);
          // A client that stopped reading is cut off rather than buffered for: it resumes from `sent`.
          if (!writeOrEnd(res, frame(e), end)) return;
        }
      }));
    res.on('close', end);
    const unsubscribe = await deps.hub.subscribe(
      scope,
      (e) => (held ? held.push(e) : void deliver([e])),
      end,
    );
    cleanup.push(unsubscribe);
    if (closed) return end();
    // Signing out, the person's deactivation or a change of their role ends the stream, on every replica.
    if (req.credential) {
      const standing = (q: Principal) => q.type === 'user' && sameStanding(openedAsAdmin, q.role);
      cleanup.push(await deps.guard.watch(req.credential.token, req.credential.accept, end, p, standing));
    }
    if (closed) return end();

    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 3000\n\n');
    const bounds = await deps.events.bounds();
    if (lastId === undefined) {
      // A fresh stream starts "now": its first id is where a later resume continues from.
      sent = bounds.max ?? 0n;
      res.write(`id: ${sent}\nevent: ready\ndata: {}\n\n`);
    } else {
      const pruned = bounds.min === null ? lastId > 0n : lastId < bounds.min - 1n;
      const backlog = pruned || (bounds.max !== null && lastId > bounds.max) ? null : await deps.events.after(scope, lastId, MAX_BACKLOG + 1);
      if (backlog === null || backlog.length > MAX_BACKLOG) {
        // Too far behind (or an id from another database): resume from now and let the client refetch.
        sent = bounds.max ?? 0n;
        res.write(`id: ${sent}\nevent: gap\ndata: ${JSON.stringify({ reason: 'events since your last id are no longer kept: refetch' })}\n\n`);
      } else {
        await deliver(backlog);
        if (closed) return;
        res.write(`event: ready\ndata: {}\n\n`);
      }
    }
    const live = held;
    held = null;
    await deliver(live);
    if (closed) return;
    const heartbeat = setInterval(() => writeOrEnd(res, ': keep-alive\n\n', end), HEARTBEAT_MS);
    cleanup.push(() => clearInterval(heartbeat));
  });
  return r.router;
}
