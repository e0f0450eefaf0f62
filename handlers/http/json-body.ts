// The request body parser: JSON only (every body in the contract is a JSON object), parsed by
// fastify's own parser, which refuses a `__proto__` key, or a `constructor` holding a
// `prototype`, anywhere in it (prototype poisoning). fastify reports such a body as invalid JSON;
// here it is refused for what it is, naming the key, so the caller is not sent looking for a
// syntax error its JSON does not have. Before any parsing, the body's depth and key count are held
// to their limits on its text (json-limits.ts), so no body costs more than its size.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../core/errors.js';
import { structureProblem } from './json-limits.js';

/** The dotted path of the first key of `value` that fastify's parser refuses, or null. */
function poisonedKey(value: unknown, path: string[] = []): string | null {
  if (value === null || typeof value !== 'object') return null;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (key === '__proto__') return [...path, key].join('.');
    if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return [...path, key, 'prototype'].join('.');
    const found = poisonedKey(child, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

export function registerJsonBody(server: FastifyInstance): void {
  // Anything but JSON is refused, never parsed as text.
  server.removeAllContentTypeParsers();
  const parse = server.getDefaultJsonParser('error', 'error');
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    const problem = structureProblem(body);
    if (problem !== null) return done(new DomainError('bad_request', problem), undefined);
    return parse(request, body, (err, value) => {
      if (err === null) return done(null, value);
      // Only a refusal is parsed again: a body that JSON.parse takes was refused for a key.
      let key: string | null = null;
      try {
        key = poisonedKey(JSON.parse(body));
      } catch {
        // Not JSON at all: fastify's own error says so.
      }
      done(key === null ? err : new DomainError('bad_request', `the request body has a '${key}' key, which is refused (it could alter object prototypes)`), undefined);
    });
  });
}
