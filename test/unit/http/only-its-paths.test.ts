// A group of /v1 routes is entered only by requests under its own paths (onlyItsPaths in
// server/http/api-router.ts): tried through a real Express app on loopback.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiRouter, onlyItsPaths } from '../../../server/http/api-router.ts';

const entered: string[] = [];
let server: Server;
let base: string;

function group(name: string, path: string, guarded?: string) {
  const r = apiRouter();
  if (guarded) {
    r.use(guarded, (_req, _res, next) => {
      entered.push(`${name} guard`);
      next();
    });
  }
  r.route({ method: 'get', path, operationId: name, summary: name, responses: { 200: z.object({ from: z.string() }) } }, (_req, res) => {
    res.json({ from: name });
  });
  return r.router;
}

beforeAll(async () => {
  const app = express();
  // A spy on each group: whether the request went into it at all.
  const spied = (name: string, router: express.Router) => {
    const gate = onlyItsPaths(router);
    // What a router runs on each request it is entered with (router's own `handle`).
    type Handle = (req: express.Request, res: express.Response, next: express.NextFunction) => void;
    const withHandle = router as express.Router & { handle: Handle };
    const handle = withHandle.handle.bind(router);
    withHandle.handle = (req, res, next) => {
      entered.push(`${name} entered`);
      handle(req, res, next);
    };
    return (req: express.Request, res: express.Response, next: express.NextFunction) =>
      gate(req, res, (err?: unknown) => {
        // Called back: the group let it pass (not its path, or no route of its own matched).
        entered.push(`${name} passed`);
        next(err);
      });
  };
  app.use(spied('items', group('items', '/items/{id}', '/items')));
  app.use(spied('guarded', group('guarded', '/secrets', '/vault-admin')));
  app.use(spied('calls', group('calls', '/calls/{id}')));
  app.use((_req, res) => res.status(404).json({ from: 'not found' }));
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function get(path: string): Promise<{ status: number; from: string; entered: string[] }> {
  entered.length = 0;
  const res = await fetch(base + path);
  return { status: res.status, from: ((await res.json()) as { from: string }).from, entered: [...entered] };
}

describe('onlyItsPaths', () => {
  it('lets a request into its own group only, where its route answers', async () => {
    const out = await get('/calls/c1');
    expect(out).toMatchObject({ status: 200, from: 'calls' });
    // The groups before it were passed by without being entered.
    expect(out.entered).toEqual(['items passed', 'guarded passed', 'calls entered']);
  });

  it('runs a group’s path-scoped middleware for its paths, and matches paths case-insensitively as Express does', async () => {
    expect(await get('/ITEMS/a1')).toMatchObject({ status: 200, from: 'items', entered: ['items entered', 'items guard'] });
    // A middleware-only segment of a group is its path too: its middleware runs, then the request moves on.
    expect(await get('/vault-admin/x')).toMatchObject({ status: 404, entered: ['items passed', 'guarded entered', 'guarded guard', 'guarded passed', 'calls passed'] });
  });

  it('passes a path no group has to what comes after them all', async () => {
    expect(await get('/nothing/here')).toMatchObject({ status: 404, from: 'not found', entered: ['items passed', 'guarded passed', 'calls passed'] });
  });

  it('refuses a router with a layer added outside apiRouter (it would be skipped unseen)', () => {
    const r = apiRouter();
    r.route({ method: 'get', path: '/a', operationId: 'a', summary: 'a', responses: { 200: null } }, (_req, res) => res.end());
    r.router.get('/b', (_req, res) => res.end());
    expect(() => onlyItsPaths(r.router)).toThrow(/1 layer\(s\) added outside apiRouter/);
    expect(() => onlyItsPaths(express.Router())).toThrow(/made by apiRouter/);
  });

  it('is listed as the router it gates (Express route listing descends into it)', () => {
    const app = express();
    app.use(onlyItsPaths(group('listed', '/listed/{id}')));
    const listed = (app as unknown as { router: { listRoutes(): { router?: { listRoutes(): { path: string }[] } }[] } }).router.listRoutes();
    expect(listed.flatMap((r) => r.router?.listRoutes().map((x) => x.path) ?? [])).toEqual(['/listed/:id']);
  });
});
