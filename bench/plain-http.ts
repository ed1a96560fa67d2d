// What the bare proxy and the billed floor, both on Node's own http server, share: reading a body whole and
// answering an error in JSON.
import type { ServerResponse } from 'node:http';

export async function readBody(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The error as JSON, or, once the answer has begun, the connection closed. */
export function answerError(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message } }));
}
