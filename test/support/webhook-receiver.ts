import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The request's path and query (tests tell their endpoints apart by it). */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A webhook receiver on 127.0.0.1: records every POST and answers 200, or
 * `failStatus` for the next `failNext` requests (a receiver that is down).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  failNext = 0;
  failStatus = 503;
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.received.push({
          url: req.url ?? '',
          headers: req.headers,
          body,
          json: JSON.parse(body) as ReceivedWebhook['json'],
        });
        if (this.failNext > 0) {
          this.failNext--;
          res.writeHead(this.failStatus).end('down for maintenance');
        } else res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  of(type: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.json.type === type);
  }

  /** Waits until `predicate` holds over what was received (polling every 50 ms). */
  async waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline)
        throw new Error(
          `webhook receiver: condition not met; got ${this.received.map((r) => r.json.type).join(', ') || 'nothing'}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
