import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';

/**
 * What one path of the host answers: a file, a redirect, a bare status, nothing at all (a stalled server), or
 * its headers and a first piece of a body that never ends (a server stalled mid-body).
 */
export type HostedEntry =
  | { contentType?: string; body: Buffer /** sent without a Content-Length */; chunked?: boolean }
  | { redirect: string }
  | { status: number }
  | 'stall'
  | 'stall mid-body';

/** A loopback web server holding media files, for inputs that clients name by URL. */
export function startMediaHost(entries: Record<string, HostedEntry>): Promise<FakeServer> {
  return startFakeServer((request, response) => {
    const entry = entries[request.path];
    if (entry === 'stall') return;
    if (entry === 'stall mid-body') return void response.writeHead(200, { 'content-length': 4096 }).write('partial');
    if (!entry) return void response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    if ('redirect' in entry) return void response.writeHead(302, { location: entry.redirect }).end();
    if ('status' in entry) return void response.writeHead(entry.status).end();
    response.writeHead(200, {
      ...(entry.chunked ? {} : { 'content-length': entry.body.length }),
      ...(entry.contentType ? { 'content-type': entry.contentType } : {}),
    });
    // Written in pieces, so a reader that stops at a limit stops mid-download.
    for (let start = 0; start < entry.body.length; start += 1024)
      response.write(entry.body.subarray(start, start + 1024));
    response.end();
  });
}
