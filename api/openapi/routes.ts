import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Type } from '@sinclair/typebox';
import { WORKFLOWS } from '../../core/workflows/registry.ts';
import { defineRoute, type RouteSpec } from '../route.ts';
import { buildOpenApiDocument } from './document.ts';

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

/** Redoc's self-contained browser build, from the `redoc` npm package: the page needs nothing else. */
export const REDOC_SCRIPT_FILE = require.resolve('redoc/bundles/redoc.standalone.js');
export const REDOC_SCRIPT_PATH = '/docs/redoc.standalone.js';

/**
 * The API reference page: Redoc rendering /openapi.json, its script served by
 * the gateway itself (no CDN: it works offline and behind a firewall).
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Mailroom API reference</title>
    <style>body { margin: 0; padding: 0; }</style>
  </head>
  <body>
    <redoc spec-url="/openapi.json"></redoc>
    <script src="${REDOC_SCRIPT_PATH}"></script>
  </body>
</html>
`;

/**
 * What the page may load: only from the gateway (Redoc's styles are inline,
 * its search runs in a blob: worker). Redoc's "API docs by Redocly" link
 * shows an image from Redocly's CDN; the browser does not fetch it.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * GET /openapi.json, GET /docs and the docs page's script. `routes` is read
 * when the document is first asked for (it includes these routes themselves),
 * and the document is built once.
 */
export function referenceRoutes(routes: () => readonly RouteSpec[]): RouteSpec[] {
  let document: string | undefined;
  let script: Promise<Buffer> | undefined;
  return [
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openApiDocument',
      summary: 'This API description (OpenAPI 3.1)',
      tag: 'health',
      responses: {
        200: {
          description: 'The OpenAPI 3.1 document.',
          schema: Type.Object({ openapi: Type.String(), info: Type.Object({}), paths: Type.Object({}) }),
        },
      },
      handler(ctx) {
        document ??= JSON.stringify(
          buildOpenApiDocument(routes(), { version, workflows: Object.values(WORKFLOWS) }),
        );
        ctx.type = 'application/json';
        ctx.body = document;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      operationId: 'apiReference',
      summary: 'The API reference, in a browser',
      tag: 'health',
      responses: { 200: { description: 'An HTML page rendering /openapi.json.', contentType: 'text/html' } },
      handler(ctx) {
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Content-Security-Policy', DOCS_CSP);
        ctx.body = DOCS_HTML;
      },
    }),
    defineRoute({
      method: 'get',
      path: REDOC_SCRIPT_PATH,
      operationId: 'apiReferenceScript',
      summary: "The reference page's script (Redoc)",
      tag: 'health',
      responses: { 200: { description: 'JavaScript.', contentType: 'text/javascript' } },
      async handler(ctx) {
        script ??= readFile(REDOC_SCRIPT_FILE);
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.type = 'text/javascript; charset=utf-8';
        ctx.body = await script;
      },
    }),
  ];
}
