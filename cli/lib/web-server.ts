// `gateway web`: the built dashboard served on its own, in front of a gateway API elsewhere. Static
// files with the single-page fallback; /v1, /oauth, /.well-known and /mcp are proxied to the API
// (streamed both ways, so Server-Sent Events pass), with redirects to the API's origin made relative.
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';

export const PROXIED = /^\/(v1|oauth|\.well-known|mcp)(\/|$|\?)/;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

export interface WebServer {
  url: string;
  close(): Promise<void>;
}

function proxy(api: URL) {
  const agent = api.protocol === 'https:' ? https : http;
  return (req: express.Request, res: express.Response) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    headers.host = api.host;
    headers['x-forwarded-host'] = req.headers.host ?? '';
    headers['x-forwarded-proto'] = 'http';
    // The dashboard's own origin is the proxy's: the API sees its own origin instead.
    if (headers.origin) headers.origin = api.origin;
    const upstream = agent.request(
      { protocol: api.protocol, hostname: api.hostname, port: api.port, method: req.method, path: req.originalUrl, headers },
      (answer) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
        const location = answer.headers.location;
        if (location?.startsWith(api.origin)) out.location = location.slice(api.origin.length) || '/';
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (res.headersSent) return res.destroy();
      res.status(502).json({ error: { code: 'unavailable', message: `the gateway API at ${api.origin} cannot be reached: ${err.message}` } });
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
}

export async function startWebServer(opts: { dir: string; api: string; host: string; port: number }): Promise<WebServer> {
  const api = new URL(opts.api);
  const app = express();
  app.disable('x-powered-by');
  app.use((req, res, next) => (PROXIED.test(req.originalUrl) ? proxy(api)(req, res) : next()));
  const index = path.join(opts.dir, 'index.html');
  if (existsSync(index)) {
    app.use(express.static(opts.dir, { index: 'index.html', setHeaders: (res, file) => file.endsWith('.html') && res.setHeader('Cache-Control', 'no-cache') }));
    app.get(/.*/, (_req, res) => {
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(index);
    });
  } else {
    app.get(/.*/, (_req, res) => void res.status(503).type('text/plain').send('The dashboard is not built yet: run `npm run build`.\n'));
  }
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
