// `gateway call --wait` hung after printing its result once a wait had lasted long enough for a
// garbage collection (issue 26 item 8): the CLI's authenticated fetch wrapped the caller's
// request in a Request of its own, and undici's abort reaches a fetch only through that object's
// weakly held signal — collected, the abort never arrived and the event stream kept the process
// alive. This holds the stream to its abort across a forced collection.
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveCaller } from '../../../cli/lib/caller.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: http.Server;
let url: string;
let home: string;
const closed: Promise<void>[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
    closed.push(new Promise((resolve) => res.once('close', () => resolve())));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  home = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-abort-'));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await rm(home, { recursive: true, force: true });
});

it('an aborted event stream is closed even after the request objects were garbage-collected', { timeout: 20_000 }, async () => {
  const env = { ...process.env };
  Object.assign(process.env, { GATEWAY_URL: url, GATEWAY_TOKEN: 'osk_test', XDG_CONFIG_HOME: home, HOME: home });
  try {
    const caller = await resolveCaller({});
    const stop = new AbortController();
    const res = await caller.fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream' }, signal: stop.signal });
    const reading = (async () => {
      try {
        for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>) void _;
      } catch {
        /* aborted */
      }
    })();
    for (let i = 0; i < 5; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    stop.abort();
    const timedOut = Symbol('open');
    const outcome = await Promise.race([closed[0]!.then(() => 'closed'), new Promise((r) => setTimeout(() => r(timedOut), 3_000))]);
    expect(outcome).toBe('closed');
    await reading;
  } finally {
    process.env = env;
  }
});
