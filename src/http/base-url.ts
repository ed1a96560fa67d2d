import type { FastifyRequest } from 'fastify';

/** The base the client called, for download links when no PUBLIC_BASE_URL is configured. */
export function requestBaseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}
