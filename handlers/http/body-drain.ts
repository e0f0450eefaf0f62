// A body refused for its size is still read, and dropped, before the refusal is sent: a client
// writes its whole body before it reads an answer, and a connection closed under it is reset, so
// it would never read why (EPIPE). Up to DRAIN_MAX_BYTES more are read, within DRAIN_MAX_MS; past
// either the answer goes anyway, and the connection closes after it.
import type { IncomingMessage } from 'node:http';

export const DRAIN_MAX_BYTES = 8 * 1024 * 1024;
const DRAIN_MAX_MS = 5_000;

/** Resolves once the body has ended, or the drain's bounds are reached. */
export function drainBody(request: IncomingMessage): Promise<void> {
  if (request.complete || request.readableEnded || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', done);
      request.off('error', done);
      request.off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_MAX_MS);
    request.on('data', onData);
    request.once('end', done);
    request.once('error', done);
    request.once('close', done);
    request.resume();
  });
}
