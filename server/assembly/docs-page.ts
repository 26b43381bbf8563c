import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';

const require = createRequire(import.meta.url);
// Scalar's self-contained browser bundle, served from our own origin: the reference page
// works without any third-party CDN.
const SCALAR_BUNDLE = require.resolve('@scalar/api-reference/browser/standalone.js');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Browser Device Operator Service: API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="/v1/openapi.json"></script>
    <script src="/docs/scalar.js"></script>
  </body>
</html>`;

export function sendDocsPage(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(PAGE);
}

export function sendScalarBundle(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600' });
  createReadStream(SCALAR_BUNDLE).pipe(res);
}
