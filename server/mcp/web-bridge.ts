// The SDK's serving entry speaks web-standard Request/Response; Express speaks Node's. The body
// was parsed already (express.json, before the bearer check), so it is handed over parsed and the
// web Request carries only the method, URL and headers. The exchange is aborted when the client
// goes away, which ends a held request.
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Request, Response } from 'express';

export function toWebRequest(req: Request, res: Response): globalThis.Request {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new globalThis.Request(new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`), { method: req.method, headers, signal: gone.signal });
}

/** Writes a web Response to Express, streaming its body (an SSE answer stays open while it lasts). */
export async function sendWebResponse(web: globalThis.Response, res: Response): Promise<void> {
  res.status(web.status);
  web.headers.forEach((value, name) => res.setHeader(name, value));
  if (!web.body) {
    res.end();
    return;
  }
  const body = Readable.fromWeb(web.body as NodeReadableStream);
  res.on('close', () => body.destroy());
  body.pipe(res);
}
