import type { FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import type { Caller } from '../domain/request-context.ts';
import { modelSurfaces, surfaceOf } from '../telemetry/surfaces.ts';

/**
 * Bodies up to this size are read before the balance and the key's caps are checked: reading one costs less
 * than asking the ledger, which every request does once its body is decoded anyway.
 */
const readBeforeAdmissionBytes = 64 * 1024;

/**
 * Admission before a large body is read (a root `preParsing` hook, after every surface's authentication): a
 * request to a model surface whose body may be larger than `readBeforeAdmissionBytes` (its length says so,
 * it has none, or it is a multipart form) is read only when the caller's balance is above zero and no cap of
 * its key is reached, so a key that cannot spend cannot make the gateway parse, validate and decode megabytes.
 * The model, named in the body, is checked once the body is read, before anything is held.
 */
export function admitBeforeLargeBodies(admits: (caller: Caller) => Promise<void>): preParsingAsyncHookHandler {
  return async (request) => {
    const principal = request.principal;
    if (!principal || !mayBeLarge(request)) return;
    const route = request.routeOptions.url ?? '';
    if (!modelSurfaces.has(surfaceOf(route)) || route.startsWith('/api/v1/webhooks')) return;
    await admits({ accountId: principal.accountId, apiKeyId: principal.kind === 'key' ? principal.apiKeyId : null });
  };
}

function mayBeLarge(request: FastifyRequest): boolean {
  const { headers } = request;
  if (headers['content-type']?.toLowerCase().startsWith('multipart/')) return true;
  const length = headers['content-length'];
  if (length === undefined) return headers['transfer-encoding'] !== undefined;
  return !(Number(length) <= readBeforeAdmissionBytes);
}
