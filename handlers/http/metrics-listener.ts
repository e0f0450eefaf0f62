// The metrics listener: GET /metrics answers the registry's Prometheus text, on a port of its own
// (METRICS_HOST:METRICS_PORT), never the public one, so an operator can keep it off the network
// partners reach. Anything else answers 404 or 405; nothing a request sends is read beyond its
// method and path.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export const METRICS_PATH = '/metrics';

export class MetricsListener {
  private readonly server: Server;

  constructor(private readonly registry: Registry) {
    this.server = createServer((request, response) => void this.answer(request, response));
  }

  /** Listens on host:port; resolves with the URL of the metrics path. */
  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => reject(err);
      this.server.once('error', failed);
      this.server.listen(port, host, () => {
        this.server.off('error', failed);
        resolve();
      });
    });
    const address = this.server.address() as AddressInfo;
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${shown}:${address.port}${METRICS_PATH}`;
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // A scraper keeps its connection open between scrapes: closing must not wait for it.
    this.server.closeIdleConnections();
    await closed;
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) return plain(response, 404, `not found; metrics are at ${METRICS_PATH}\n`);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return plain(response, 405, 'method not allowed\n');
    }
    let text: string;
    try {
      text = await this.registry.metrics();
    } catch {
      return plain(response, 500, 'metrics could not be collected\n');
    }
    response.writeHead(200, { 'content-type': this.registry.contentType, 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : text);
  }
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  response.end(text);
}
