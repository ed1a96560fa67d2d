import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The absolute base of the links the gateway hands out (downloads, polling): PUBLIC_BASE_URL, or
     * `http://HOST:PORT` of the configuration. Never taken from a request: its `Host` and forwarded headers are
     * the client's to choose, and a link made on them would send other readers of the answer elsewhere.
     */
    publicBaseUrl: string;
  }
}

/** The base for absolute links in an answer to this request: the configured one, whatever the request says. */
export function requestBaseUrl(request: FastifyRequest): string {
  return request.server.publicBaseUrl;
}

/** True when HOST is not a loopback address, so clients on other machines call the gateway (and need its links). */
export function listensBeyondLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return false;
  if (isIP(bare) === 4) return !bare.startsWith('127.');
  if (isIP(bare) === 6) return bare !== '::1' && !/^::ffff:127\./.test(bare);
  return true;
}
