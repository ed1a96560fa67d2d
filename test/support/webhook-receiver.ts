import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver does with a request: answer with a status (and body), or never answer (`stall`). */
export type ReceiverAction = { status: number; body?: string; headers?: Record<string, string> } | 'stall';

/**
 * A webhook endpoint on loopback that records every request and answers as `next` says (by default 200).
 * Stalled requests are ended when the receiver closes.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  next: (request: ReceivedWebhook, index: number) => ReceiverAction = () => ({ status: 200, body: 'ok' });
  private readonly server: Server;
  private readonly waiters = new Set<() => void>();

  private constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(received);
        for (const waiter of this.waiters) waiter();
        const action = this.next(received, this.received.length - 1);
        if (action === 'stall') return;
        response.writeHead(action.status, { 'content-type': 'text/plain', ...action.headers }).end(action.body ?? '');
      });
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Resolves once at least `count` requests arrived (or rejects after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 15_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`${this.received.length} of ${count} webhook requests arrived`);
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiters.delete(done);
          resolve();
        };
        this.waiters.add(done);
        setTimeout(done, 50);
      });
    }
    return this.received;
  }

  /** The requests of one event type (as the body says). */
  ofType(type: string): ReceivedWebhook[] {
    return this.received.filter((request) => (JSON.parse(request.body) as { type: string }).type === type);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
