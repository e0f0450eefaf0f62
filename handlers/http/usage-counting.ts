// Which answered requests count as a partner key's usage: a request of the swap API (an operation
// of openapi/v1.yaml or openapi/v2.yaml that takes a key; both versions name an operation alike) sent with a verified key, once, when answered, its 429s by
// the limit that refused them. Keyless requests and refused keys are no one's; the key portal's
// own operations are not API traffic, and are never counted.
import type { FastifyRequest } from 'fastify';
import type { Document } from 'openapi-backend';
import type { UsageRecorder } from '../../core/usage/usage.js';

type Security = ReadonlyArray<Record<string, unknown>> | undefined;

/** The operationIds of `definition` that accept a key. */
export function keyedOperations(definition: Document): Set<string> {
  const takesKey = (security: Security) => (security ?? []).some((s) => Object.keys(s).length > 0);
  const ids = new Set<string>();
  for (const item of Object.values(definition.paths ?? {})) {
    for (const operation of Object.values(item ?? {}) as Array<{ operationId?: string; security?: Security }>) {
      if (typeof operation !== 'object' || operation === null || typeof operation.operationId !== 'string') continue;
      if (takesKey(operation.security ?? (definition.security as Security))) ids.add(operation.operationId);
    }
  }
  return ids;
}

/** Counts a finished request in its key's usage when it is one of the API's keyed operations (of any of its `definitions`) sent with a verified key. */
export function usageCounting(recorder: UsageRecorder, definitions: readonly Document[]): (request: FastifyRequest) => void {
  const counted = new Set(definitions.flatMap((definition) => [...keyedOperations(definition)]));
  return (request) => {
    const fields = request.logFields;
    // Set only once the key was verified (handlers/http/operation-routes.ts): never for a keyless or refused key.
    const keyId = fields?.partnerId;
    if (keyId === undefined) return;
    const operationId = request.operationId;
    if (operationId === null || !counted.has(operationId)) return;
    recorder.record(keyId, operationId, fields!.rateLimit ?? null);
  };
}
