// A real TCP relay on loopback between a gateway and its Temporal server: the network between
// them, which a test can make lose what the server answers (a reply that never arrives, as when
// Temporal restarts or a connection breaks while an RPC is in flight). Nothing is parsed.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpRelay {
  /** host:port to give the gateway instead of the server's. */
  address: string;
  /** From now on, what the server sends on the open connections is dropped (the client hears nothing). */
  loseReplies(): void;
  /** Breaks every open connection; new ones are relayed normally. */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const open = new Set<{ client: net.Socket; server: net.Socket; lose: boolean }>();
  const relay = net.createServer((client) => {
    const server = net.connect({ host, port });
    const pair = { client, server, lose: false };
    open.add(pair);
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk) => {
      if (!pair.lose) client.write(chunk);
    });
    const end = () => {
      open.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(relay.address() as AddressInfo).port}`,
    loseReplies() {
      for (const pair of open) pair.lose = true;
    },
    cut() {
      for (const pair of open) {
        pair.client.resetAndDestroy();
        pair.server.destroy();
      }
      open.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of open) {
          pair.client.destroy();
          pair.server.destroy();
        }
        relay.close(() => resolve());
      }),
  };
}
