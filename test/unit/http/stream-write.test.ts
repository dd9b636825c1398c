// A stream whose client stopped reading is ended once it holds a bound of unsent bytes, instead of
// growing the process with every event (server/http/stream-write.ts); a reading client gets all.
// A real server and a real client socket on loopback.
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { writeOrEnd } from '../../../server/http/stream-write.ts';

const MAX = 64 * 1024;
const CHUNK = 'x'.repeat(16 * 1024);
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server that writes CHUNK through writeOrEnd every millisecond until the stream ends, up to `chunks`; resolves what it wrote. */
async function streamingServer(chunks: number): Promise<{ port: number; done: Promise<{ written: number; endedEarly: boolean }> }> {
  let finish!: (r: { written: number; endedEarly: boolean }) => void;
  const done = new Promise<{ written: number; endedEarly: boolean }>((r) => (finish = r));
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let written = 0;
    let ended = false;
    const end = () => {
      ended = true;
      res.end();
    };
    const timer = setInterval(() => {
      if (written === chunks || ended) {
        clearInterval(timer);
        if (!ended) res.end();
        finish({ written, endedEarly: ended });
        return;
      }
      if (writeOrEnd(res, CHUNK, end, MAX)) written++;
    }, 1);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, done };
}

function request(port: number): net.Socket {
  const socket = net.connect(port, '127.0.0.1');
  socket.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return socket;
}

describe('writeOrEnd', () => {
  it('ends the stream of a client that does not read, having buffered at most the bound', async () => {
    const { port, done } = await streamingServer(100_000);
    const socket = request(port);
    socket.pause(); // reads nothing: the kernel's buffers fill, then Node's
    const { written, endedEarly } = await done;
    socket.destroy();
    expect(endedEarly).toBe(true);
    // What the kernel took plus at most the bound held by Node: nowhere near the 1.6 GB asked for.
    expect(written * CHUNK.length).toBeLessThan(64 * 1024 * 1024);
  });

  it('gives a reading client every chunk', async () => {
    const { port, done } = await streamingServer(500);
    const socket = request(port);
    let received = 0;
    let all!: () => void;
    const allReceived = new Promise<void>((r) => (all = r));
    socket.on('data', (d: Buffer) => {
      received += d.length;
      if (received > 500 * CHUNK.length) all();
    });
    const { written, endedEarly } = await done;
    await allReceived; // the body, headers and chunk framing on top: more than the chunks alone
    socket.destroy();
    expect(endedEarly).toBe(false);
    expect(written).toBe(500);
  });
});
