// The metrics listener (METRICS_HOST:METRICS_PORT, apart from the API so it is never public by
// accident): GET /metrics answers the gateway's registry followed by the Temporal SDK's own
// series (`temporal_*`), which the SDK serves on a loopback port of its own: one scrape target.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenError } from '../embedded/startup-error.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from './metrics.ts';

export interface MetricsListener {
  /** e.g. http://127.0.0.1:9464/metrics */
  url: string;
  stop(): Promise<void>;
}

export interface MetricsListenerOptions {
  host: string;
  port: number;
  metrics: GatewayMetrics;
  /** Where the SDK serves its metrics (null: no worker in this process, or none installed). */
  temporalMetricsUrl: () => string | null;
  logger: Logger;
}

export async function startMetricsListener(o: MetricsListenerOptions): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    void scrape(o).then(
      (text) => res.writeHead(200, { 'content-type': o.metrics.registry.contentType }).end(text),
      (err: unknown) => {
        o.logger.warn({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError('METRICS_PORT', o.port, o.host, err, 'METRICS_HOST') ?? err));
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}/metrics`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function scrape(o: MetricsListenerOptions): Promise<string> {
  const [own, temporal] = await Promise.all([o.metrics.registry.metrics(), temporalSeries(o)]);
  return temporal ? `${own.trimEnd()}\n${temporal}` : own;
}

/** The SDK's series; a scrape still answers the gateway's own if the SDK's exporter does not. */
async function temporalSeries(o: MetricsListenerOptions): Promise<string> {
  const url = o.temporalMetricsUrl();
  if (!url) return '';
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return await res.text();
  } catch (err) {
    o.logger.debug({ err: (err as Error).message }, 'the Temporal SDK metrics could not be read');
    return '';
  }
}
