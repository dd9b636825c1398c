// The embedded Temporal UI, read-only. `temporal server start-dev` builds its UI server from a fixed
// config with no way to set `disableWriteActions` or the per-action switches, and anyone who can
// reach a writable UI can signal, update, cancel or terminate a call's workflow (allow a pending
// call without the gateway). So the dev server's UI listens on an internal loopback port and this
// proxy answers on TEMPORAL_UI_PORT: reads pass, every write is refused here, and /api/v1/settings
// says writes are disabled so the UI hides its buttons.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The UI server's settings switches that turn its write actions off (temporalio/ui-server config). */
export const READ_ONLY_SETTINGS: Readonly<Record<string, true>> = {
  DisableWriteActions: true,
  WorkflowTerminateDisabled: true,
  WorkflowCancelDisabled: true,
  WorkflowSignalDisabled: true,
  WorkflowUpdateDisabled: true,
  WorkflowResetDisabled: true,
  BatchActionsDisabled: true,
  StartWorkflowDisabled: true,
  ActivityCommandsDisabled: true,
};

/** The same switches as a UI server config file spells them (`disableWriteActions: true`, …). */
export const READ_ONLY_UI_CONFIG: Readonly<Record<string, true>> = Object.fromEntries(
  Object.keys(READ_ONLY_SETTINGS).map((key) => [key[0]!.toLowerCase() + key.slice(1), true as const]),
);

// A workflow query only reads (the UI's "Queries" tab): POST, but allowed, as ui-server does with
// writes disabled. Matched on the raw path segment by segment, so an escaped id cannot smuggle in
// another action.
const QUERY_PATH = /^\/api\/v1\/namespaces\/[^/]+\/workflows\/[^/]+\/query\/[^/]+$/;

/** Whether the read-only UI lets this request through (pure: method and raw request target). */
export function readOnlyAllows(method: string, target: string): boolean {
  if (method === 'GET' || method === 'HEAD') return true;
  const rawPath = target.split('?')[0]!;
  return method === 'POST' && QUERY_PATH.test(rawPath);
}

/** The settings document with every write switch turned off (other fields kept). */
export function readOnlySettings(settings: Record<string, unknown>): Record<string, unknown> {
  return { ...settings, ...READ_ONLY_SETTINGS };
}

export interface ReadOnlyUi {
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` and forwards the allowed requests to the UI at 127.0.0.1:`upstreamPort`. */
export async function startReadOnlyUi(opts: { port: number; upstreamPort: number }): Promise<ReadOnlyUi> {
  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    if (!readOnlyAllows(method, target)) {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' });
      res.end(JSON.stringify({ message: 'The Temporal UI is read-only here: decide calls in the gateway.' }));
      req.resume();
      return;
    }
    const isSettings = target.split('?')[0] === '/api/v1/settings';
    const headers = { ...req.headers, ...(isSettings ? { 'accept-encoding': 'identity' } : {}) };
    const upstream = http.request({ host: '127.0.0.1', port: opts.upstreamPort, method, path: target, headers }, (up) => {
      if (!isSettings || up.statusCode !== 200) {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => {
        let body: string;
        try {
          body = JSON.stringify(readOnlySettings(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>));
        } catch {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: 'unreadable settings from the Temporal UI' }));
          return;
        }
        const { 'content-length': _length, 'transfer-encoding': _encoding, ...rest } = up.headers;
        res.writeHead(200, { ...rest, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'the Temporal UI is not answering' }));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
