// A server-sent events client for the plan status section, as small as a client can be so that
// what it measures is the service: one connection of its own per stream (node:http, no pool), each
// event's data parsed, and the wall-clock time its bytes arrived kept beside it.
import { request, type IncomingMessage } from 'node:http';

export interface Received<T> {
  readonly data: T;
  /** Date.now() when the chunk holding the event's end arrived. */
  readonly receivedAtMs: number;
}

export interface EventStream<T> {
  readonly events: Array<Received<T>>;
  /** Settles with the first event; rejects when the stream ends or fails before it. */
  readonly first: Promise<Received<T>>;
  /** Settles when the service ends the stream (or it fails, or `close` is called). */
  readonly ended: Promise<void>;
  /** Closes the connection from this side. */
  close(): void;
}

/** Opens `url` as an event stream; rejects unless the answer is 200 text/event-stream. */
export function openEventStream<T>(url: string, headers: Readonly<Record<string, string>> = {}): Promise<EventStream<T>> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } });
    req.once('error', reject);
    req.once('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.resume();
        reject(new Error(`${new URL(url).pathname} answered ${res.statusCode} ${String(res.headers['content-type'])}`));
        return;
      }
      const events: Array<Received<T>> = [];
      let settleFirst!: { resolve: (r: Received<T>) => void; reject: (e: Error) => void };
      const first = new Promise<Received<T>>((resolve, reject) => (settleFirst = { resolve, reject }));
      // Never left unhandled: a caller that does not wait for the first event need not catch it.
      first.catch(() => undefined);
      const ended = new Promise<void>((done) => {
        const finish = () => {
          settleFirst.reject(new Error('the stream ended before its first event'));
          done();
        };
        res.once('end', finish);
        res.once('close', finish);
        res.once('error', finish);
      });
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const receivedAtMs = Date.now();
        buffered += chunk;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
          if (data === '') continue;
          const event = { data: JSON.parse(data) as T, receivedAtMs };
          events.push(event);
          if (events.length === 1) settleFirst.resolve(event);
        }
      });
      resolve({ events, first, ended, close: () => req.destroy() });
    });
    req.end();
  });
}
