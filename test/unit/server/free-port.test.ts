import net from 'node:net';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../server/embedded/processes.ts';

function listen(port: number, host: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, host, () => resolve(srv));
  });
}

describe('freePort', () => {
  it('picks a port outside the range the kernel hands out, so no bind-to-0 or outgoing connection can take it first', async () => {
    const [low, high] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number);
    for (let i = 0; i < 20; i += 1) {
      const port = await freePort();
      expect(port < low! || port > high!).toBe(true);
      expect(port).toBeGreaterThanOrEqual(10_000);
    }
  });

  it('returns a port that can be listened on, on the loopback and on every interface', async () => {
    const port = await freePort();
    const everywhere = await listen(port, '::');
    await new Promise((r) => everywhere.close(r));
    const loopback = await listen(port, '127.0.0.1');
    await new Promise((r) => loopback.close(r));
  });

  it('never returns a port someone listens on', async () => {
    const taken: net.Server[] = [];
    try {
      for (let i = 0; i < 10; i += 1) {
        const port = await freePort();
        expect(taken.map((s) => (s.address() as net.AddressInfo).port)).not.toContain(port);
        taken.push(await listen(port, '127.0.0.1'));
      }
    } finally {
      for (const s of taken) s.close();
    }
  });
});
