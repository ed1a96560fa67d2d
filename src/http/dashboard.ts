import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import { requestPath } from './error-envelope.ts';

/** Where `npm run build` puts the dashboard (web/dist), from src/http or dist/http alike. */
export const builtDashboardDir = path.resolve(import.meta.dirname, '../../web/dist');

/** Vite names the files under assets/ after a hash of their content, so a new build never reuses a name. */
const immutable = 'public, max-age=31536000, immutable';

/**
 * The page may load scripts, styles and API answers from the gateway only; media previews may come from
 * wherever the archive signs its links (an S3 bucket), hence any source for images, audio and video.
 */
const pageHeaders = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src * data: blob:; media-src * blob:; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // Signed media links in the page's requests must not travel on in a Referer.
  'referrer-policy': 'no-referrer',
};

function setPageHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(pageHeaders)) reply.header(name, value);
}

/** Paths of the API and of operators' endpoints: never the page, whatever the browser accepts. */
const machinePaths = /^\/(api|metrics|openapi\.json|docs|livez|readyz)(\/|$)/;

function isApiPath(request: FastifyRequest): boolean {
  let pathname: string;
  try {
    // As the router reads it: "/%61pi/v1/nope" is an API path too.
    pathname = decodeURIComponent(requestPath(request)).toLowerCase();
  } catch {
    return true;
  }
  return machinePaths.test(pathname);
}

function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    !isApiPath(request) &&
    typeof accept === 'string' &&
    accept.toLowerCase().includes('text/html')
  );
}

function notBuilt(directory: string): GatewayError {
  return new GatewayError(
    'GW_NOT_FOUND',
    `the dashboard is not built (${path.join(directory, 'index.html')} is missing): run "npm run build" (npm ci runs it) and restart the gateway`,
  );
}

/**
 * Serves the dashboard's single-page app at `/`: its built files by name (index.html no-cache, hashed
 * assets cached for a year), and index.html for any other non-API page a browser asks for, so client-side
 * routes survive a reload. Anything under /api/ is left to the routes and their JSON errors. Without a
 * build the gateway still starts; `/` then answers a 404 envelope saying so.
 *
 * Returns the fallback for the not-found handler: it answers the request when it is a page, else returns
 * undefined.
 */
export async function registerDashboard(
  app: FastifyInstance,
  directory: string,
): Promise<(request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined> {
  if (!existsSync(path.join(directory, 'index.html'))) {
    app.get('/', async () => {
      throw notBuilt(directory);
    });
    return (request) => {
      if (wantsPage(request)) throw notBuilt(directory);
      return undefined;
    };
  }
  await app.register(fastifyStatic, {
    root: directory,
    prefix: '/',
    // One route per built file, listed at start: nothing else on disk is ever looked up.
    wildcard: false,
    index: ['index.html'],
    setHeaders: (reply, filePath) => {
      if (filePath.endsWith('.html')) setPageHeaders(reply);
      else if (filePath.startsWith(path.join(directory, 'assets') + path.sep)) reply.header('cache-control', immutable);
    },
  });
  return (request, reply) => {
    if (!wantsPage(request)) return undefined;
    return reply.sendFile('index.html');
  };
}
