// One access-log line per request, written by fastify's own log controller: method, route
// pattern, status and latency, plus the fields a handler annotated. Never the URL (its query may
// hold a party id) and never headers (they may hold a key).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** Extra fields for this request's access-log line. */
    logFields?: Record<string, string | number | boolean>;
  }
}

export class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? '(none)',
      status: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime * 1000) / 1000,
      ...request.logFields,
    };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request completed');
  }
}
