// The sandbox's token registries over HTTP on loopback: each instrument admin's registry under its
// own base (`<url>/amulet`, `<url>/usdcx`, `<url>/cbtc`), as public registries are reached: with no
// credential. Answers and refusals as the token standard's OpenAPI documents define them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { answeredPreflight, BodyTooLarge, closeServer, listen, readBody, sendJson } from '../loopback-server.js';
import type { SandboxLedger } from '../ledger/sandbox-ledger.js';
import { REGISTRY_PATHS, registryAnswer, type RegistryReply } from './registry.js';

const MAX_BODY_BYTES = 64 * 1024;

export interface SandboxRegistryServer {
  readonly url: string;
  /** Each admin's registry base URL. */
  readonly registries: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

export async function startSandboxRegistryServer(ledger: SandboxLedger, options: { host: string; port: number; synchronizerId: string }): Promise<SandboxRegistryServer> {
  const server = createServer((request, response) => void serve(ledger, options.synchronizerId, request, response));
  const url = await listen(server, options.host, options.port, 'the sandbox registry', 'set SANDBOX_REGISTRY_PORT to a free port, or 0 for any');
  const registries = Object.fromEntries(Object.entries(REGISTRY_PATHS).map(([instrument, path]) => [ledger.admins[instrument as keyof typeof ledger.admins], `${url}${path}`]));
  return { url, registries, close: () => closeServer(server) };
}

async function serve(ledger: SandboxLedger, synchronizerId: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (answeredPreflight(request, response)) return;
  let reply: RegistryReply;
  try {
    const url = new URL(request.url ?? '/', 'http://registry');
    const text = await readBody(request, MAX_BODY_BYTES);
    const entry = Object.entries(REGISTRY_PATHS).find(([, prefix]) => url.pathname.startsWith(`${prefix}/`));
    let body: unknown = undefined;
    if (text !== '') body = JSON.parse(text);
    const answer = entry ? registryAnswer(ledger, synchronizerId, ledger.admins[entry[0] as keyof typeof ledger.admins], request.method ?? 'GET', url.pathname.slice(entry[1].length), body) : null;
    reply = answer ?? { status: 404, body: { error: `no registry route ${request.method ?? 'GET'} ${url.pathname.slice(0, 120)}: registries are under ${Object.values(REGISTRY_PATHS).join(', ')}` } };
  } catch (err) {
    reply =
      err instanceof BodyTooLarge ? { status: 413, body: { error: 'request body too large' } }
      : err instanceof SyntaxError ? { status: 400, body: { error: 'the request body is not JSON' } }
      : { status: 500, body: { error: 'the sandbox registry failed' } };
  }
  sendJson(response, reply.status, reply.body);
}
