import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import { httpStatusOf } from '@flowbox/protocol';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorBody } from './error-handler.ts';

export const INSPECTOR_PATH = '/inspector/';
/** Where `pnpm build` writes the inspector (scripts/build/inspector-bundle.ts). */
export const INSPECTOR_DIST = join(import.meta.dirname, '..', '..', 'dist', 'inspector');

/**
 * Only this origin's script and styles, no inline code, no framing: the page shows what flows
 * and callers wrote (outputs, errors) and holds the API key in sessionStorage, so nothing else
 * may run in it. Presigned log links are plain navigations, which CSP leaves alone.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Small files that change with each build: revalidated (ETag) rather than cached blind.
  'cache-control': 'no-cache',
};

/**
 * The run inspector's static files at /inspector/ (index.html, inspector.js, inspector.css).
 * They hold code only and are served without the key: a browser navigation cannot send an
 * `authorization` header. The page asks for the key and sends it on every API call; every
 * figure it shows comes from the management API behind the key (README, Run inspector).
 */
export function registerInspector(app: FastifyInstance, dir = INSPECTOR_DIST): void {
  app.get('/inspector', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect(INSPECTOR_PATH),
  );
  if (!existsSync(join(dir, 'index.html'))) {
    app.get(`${INSPECTOR_PATH}*`, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .status(503)
        .type('text/plain')
        .send(`the run inspector is not built here: run \`pnpm build\` (looked in ${dir})\n`),
    );
    return;
  }
  void app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(SECURITY_HEADERS);
    });
    // @fastify/static refuses a path outside its root (`..%2f`) or a dotfile with 403, which the
    // app's handler would answer 500: nothing is there to serve, so it is not found.
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status < 400 || status > 499) throw error;
      const body: ErrorBody = {
        error: { code: 'ROUTE_NOT_FOUND', message: `no route ${request.method} ${request.url}` },
      };
      return reply.status(httpStatusOf(body.error.code)).send(body);
    });
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: INSPECTOR_PATH,
      decorateReply: false,
      schemaHide: true,
      index: 'index.html',
      etag: true,
      lastModified: false,
      cacheControl: false,
      dotfiles: 'deny',
    });
  });
}
