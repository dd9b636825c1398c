// GET /docs: the API reference, rendered in the browser by @scalar/api-reference from
// /v1/openapi.json. The component's standalone bundle is served from node_modules (no CDN), and
// the page's Content-Security-Policy keeps everything on this origin.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router } from 'express';

// The package exports no path to its browser bundle: find it next to its main module (dist/).
const BUNDLE = path.join(path.dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference'))), 'browser', 'standalone.js');

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Action Gateway — API reference</title>
</head>
<body>
<div id="app"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// Offline: no default web fonts, no proxy, no links out to hosted clients.
const INIT = `Scalar.createApiReference('#app', {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  telemetry: false,
});
`;

export function referencePageRoutes(): Router {
  const r = Router();
  r.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(PAGE);
  });
  r.get('/docs/init.js', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/javascript').send(INIT);
  });
  r.get('/docs/scalar.js', (_req, res) => {
    res.sendFile(BUNDLE, { maxAge: '1d', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } });
  });
  return r;
}
