// A sandbox whose participant and registries are reached through a recording proxy, so a test can
// hold every answer its clients (Canton's own packages, or a tour of its own) were given to the
// pinned official OpenAPI documents. The proxy passes requests on as they came, Content-Type or
// none, and answers as the sandbox answered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox } from '../../sandbox/sandbox.js';
import { loadOfficialOpenApi, validateAnswer, type OfficialOpenApiName } from './official-openapi.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

interface Asserts {
  ok(value: unknown, message: string): void;
}

export interface Exchange {
  readonly doc: OfficialOpenApiName;
  readonly method: string;
  /** The path under the document's base: the ledger's, or a registry's (without its admin's prefix). */
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
  readonly contentType: string;
}

/** Which document describes a path: a registry's, the token standard's; the participant's, the ledger's; null for the sandbox's own controls. */
function documentOf(server: 'ledger' | 'registry', path: string): OfficialOpenApiName | null {
  if (server === 'ledger') return path.startsWith('/sandbox/') ? null : 'ledger';
  return path.startsWith('/registry/metadata/') ? 'token-metadata' : 'transfer-instruction';
}

/** A loopback proxy to `target` that records each exchange, the path read by `pathOf`. */
async function recordingProxy(target: string, server: 'ledger' | 'registry', exchanges: Exchange[], pathOf: (path: string) => string): Promise<Server & { url: string }> {
  const proxy = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type']) if (typeof request.headers[name] === 'string') headers[name] = request.headers[name];
      void fetch(`${target}${request.url ?? '/'}`, { method: request.method, headers, body })
        .then(async (answer) => {
          const text = await answer.text();
          const path = pathOf((request.url ?? '/').split('?')[0]!);
          const doc = documentOf(server, path);
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Recorded as text: the document decides whether text was the answer to give.
          }
          if (doc) exchanges.push({ doc, method: request.method ?? 'GET', path, status: answer.status, body: parsed, contentType: answer.headers.get('content-type') ?? '' });
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          response.end(text);
        })
        .catch(() => {
          response.writeHead(502);
          response.end();
        });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
}

/** Holds each recorded answer to its document; a path no document has must be the participant's 404. */
export function holdToDocuments(t: Asserts, exchanges: readonly Exchange[]): void {
  for (const exchange of exchanges) {
    let verdict: { ok: boolean; errors: string };
    try {
      verdict = validateAnswer(loadOfficialOpenApi(exchange.doc), exchange);
    } catch (err) {
      verdict = { ok: exchange.status === 404 && /no route/.test(JSON.stringify(exchange.body)), errors: (err as Error).message };
    }
    t.ok(verdict.ok, `${exchange.method} ${exchange.path} -> ${exchange.status} holds to the ${exchange.doc} document${verdict.ok ? '' : `: ${verdict.errors}`}`);
  }
}

/** A sandbox of its own whose manifest points at recording proxies; `exchanges` is everything answered through them. */
export async function observedSandbox(t: Teardown) {
  const sandbox = await startSandbox({ venuesPort: 0, ledgerHost: '127.0.0.1', ledgerPort: 0 });
  t.teardown(() => sandbox.close());
  const exchanges: Exchange[] = [];
  const ledger = await recordingProxy(sandbox.manifest.ledger, 'ledger', exchanges, (path) => path);
  const registryOrigin = new URL(Object.values(sandbox.manifest.registries)[0]!).origin;
  // A registry's path under the server is its admin's prefix, then the standard's path.
  const registry = await recordingProxy(registryOrigin, 'registry', exchanges, (path) => path.replace(/^\/[^/]+/, ''));
  for (const proxy of [ledger, registry]) {
    t.teardown(() => new Promise<void>((resolve) => {
      proxy.close(() => resolve());
      proxy.closeAllConnections();
    }));
  }
  const manifest = {
    ...sandbox.manifest,
    ledger: ledger.url,
    registries: Object.fromEntries(Object.entries(sandbox.manifest.registries).map(([admin, url]) => [admin, url.replace(registryOrigin, registry.url)])),
  };
  return { ...sandbox, manifest, exchanges };
}
