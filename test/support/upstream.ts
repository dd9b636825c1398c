// A real HTTP server on loopback standing in for a third-party API. It records every request.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Upstream {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Replace the default handler (echo JSON) for the next requests. */
  handle(fn: (req: RecordedRequest, res: http.ServerResponse) => void): void;
  close(): Promise<void>;
}

/** The top-level field names of a JSON or form-urlencoded request body (none for a multipart one). */
function bodyKeys(r: RecordedRequest): string[] {
  const type = String(r.headers['content-type'] ?? '');
  if (!r.body || type.startsWith('multipart/')) return [];
  const keys = type.startsWith('application/x-www-form-urlencoded') ? new URLSearchParams(r.body).keys() : Object.keys(JSON.parse(r.body) as object);
  return [...new Set(keys)].sort();
}

export async function startUpstream(): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  let handler = (r: RecordedRequest, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // Echo only the body's keys: values the caller sent stay out of responses.
    res.end(JSON.stringify({ ok: true, method: r.method, url: r.url, body_keys: bodyKeys(r) }));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(rec);
      handler(rec, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    handle: (fn) => (handler = fn),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Makes the upstream hold every request matching `match` until the returned release is called
 * (the "slow upstream"); the others are answered at once. Answers are 201 for POST, 200 otherwise.
 */
export function holdRequests(up: Upstream, match: (r: RecordedRequest) => boolean): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  up.handle((req, res: http.ServerResponse) => {
    const answer = () => {
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, url: req.url }));
    };
    if (match(req)) void gate.then(answer);
    else answer();
  });
  return release;
}

/** A service document for the upstream: API-key auth from the vault, read/write/delete actions. */
export function upstreamServiceDoc(key: string, baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: { title: `Widgets (${key})`, key, version: '1' },
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: 'WIDGETS_KEY' } },
    },
    security: [{ api_key: [] }],
    paths: {
      '/items/{id}': {
        get: {
          operationId: 'get_item',
          summary: 'Read item {id}',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok' } },
        },
        delete: {
          operationId: 'delete_item',
          summary: 'Delete item {id}',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '204': { description: 'gone' } },
        },
      },
      '/items': {
        post: {
          operationId: 'create_item',
          summary: 'Create item "{name}"[ in {folder}]',
          'x-gateway-scope_param': 'name',
          'x-gateway-redact': ['body.password'],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['name'],
                  properties: { name: { type: 'string' }, folder: { type: 'string' }, password: { type: 'string' } },
                  additionalProperties: false,
                },
              },
            },
          },
          responses: { '201': { description: 'created' } },
        },
      },
    },
  };
}
