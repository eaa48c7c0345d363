import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A round-robin HTTP proxy in front of the gateways, as an operator would put
 * nginx or a cloud load balancer there: each request goes to the next
 * upstream in turn, on a fresh connection (no keep-alive, so a gateway that
 * stops listening is noticed on the next request). A connection the upstream
 * refused never reached it, so the request goes to the next upstream (nginx's
 * `proxy_next_upstream error`); anything else that fails (a reset after the
 * request was written, a timeout) is answered 502: the caller cannot know
 * whether the gateway took it, and retries with the same Idempotency-Key.
 *
 * Every answer carries `x-upstream: <index>`, so the scale checks can show
 * which gateway served a request. Request bodies are small here and are read
 * whole before forwarding, so a refused connection can be retried elsewhere.
 */
export class RoundRobinProxy {
  private server: Server | undefined;
  private next = 0;
  /** Requests each upstream answered (by index). */
  readonly served: number[];
  /** Connections refused by an upstream and sent to the next one. */
  refused = 0;
  url = '';

  constructor(readonly upstreams: ReadonlyArray<{ host: string; port: number }>) {
    this.served = upstreams.map(() => 0);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const first = this.next++ % this.upstreams.length;
    for (let tried = 0; tried < this.upstreams.length; tried++) {
      const index = (first + tried) % this.upstreams.length;
      const outcome = await this.forward(index, req, body, res);
      if (outcome !== 'refused') return;
      this.refused++;
    }
    res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"no gateway is listening"}');
  }

  /** One attempt at one upstream: 'refused' when it never took the connection. */
  private forward(
    index: number,
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
  ): Promise<'answered' | 'refused' | 'failed'> {
    const upstream = this.upstreams[index]!;
    return new Promise((resolve) => {
      const headers: Record<string, string | string[] | undefined> = { ...req.headers, connection: 'close' };
      if (body.length > 0 || req.method !== 'GET') headers['content-length'] = String(body.length);
      const out = request(
        {
          host: upstream.host,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers,
          agent: false,
        },
        (answer) => {
          this.served[index]!++;
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-upstream': String(index) });
          answer.pipe(res);
          answer.on('end', () => resolve('answered'));
          answer.on('error', () => {
            res.destroy();
            resolve('failed');
          });
        },
      );
      out.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') return resolve('refused');
        if (!res.headersSent)
          res
            .writeHead(502, { 'content-type': 'application/json' })
            .end(`{"error":"${err.code ?? 'upstream error'}"}`);
        else res.destroy();
        resolve('failed');
      });
      out.end(body);
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
