// GET /sdk/widget.js and /sdk/sdk.js: the SDK's browser scripts, as make build bundled them, so a
// host embeds the widget with one tag.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { errorReply, sendError } from '../http/error-reply.js';

/** `bundles` is the directory make build writes them to (sdk/dist/bundle/). */
export function registerSdkBundles(server: FastifyInstance, bundles: string): void {
  for (const name of ['widget', 'sdk']) {
    const file = path.join(bundles, `${name}.js`);
    const script = existsSync(file) ? readFileSync(file) : null;
    server.get(`/sdk/${name}.js`, async (request, reply) =>
      script === null
        ? sendError(reply, errorReply('not_found', `no such path: ${request.method} /sdk/${name}.js (the SDK is not built: make build)`))
        : reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(script),
    );
  }
}
