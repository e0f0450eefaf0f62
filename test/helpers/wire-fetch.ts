// A `fetch` that answers from a sandbox venue's wire handler (sandbox/venues/), without a
// socket: for testing a real adapter against its sandbox venue's wire shape in-process. The
// venue server itself (real loopback HTTP) is tested in test/sandbox/venues/server.test.ts.
import type { WireHandler } from '../../sandbox/venues/wire.js';

/** `base` is the adapter's base URL; requests outside it are a test error. */
export function wireFetch(handler: WireHandler, base: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    if (!url.href.startsWith(base)) throw new Error(`request outside ${base}: ${url.href}`);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries((init?.headers as Record<string, string> | undefined) ?? {})) headers[name.toLowerCase()] = value;
    const answer = handler({
      method: init?.method ?? 'GET',
      path: decodeURIComponent(url.pathname.slice(new URL(base).pathname.replace(/\/$/, '').length)),
      query: url.searchParams,
      headers,
      body: typeof init?.body === 'string' ? init.body : '',
    });
    return new Response(answer.body, { status: answer.status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}
