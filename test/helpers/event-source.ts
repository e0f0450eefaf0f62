// The browser's EventSource, which Node 20 lacks, for the dApp providers that stream a gateway's
// events with it. Each one opened is closed when the test file ends: the eventsource package arms
// its reconnection timer (3 s) even after an error handler closed the stream, and that timer alone
// would hold the finished test process open that long.
import { EventSource } from 'eventsource';
import t from 'tap';

/** Gives `globalThis` an EventSource where it has none, each one opened closed once the file's tests end. */
export function provideEventSource(): void {
  const globals = globalThis as { EventSource?: unknown };
  if (globals.EventSource !== undefined) return;
  const opened = new Set<EventSource>();
  globals.EventSource = class extends EventSource {
    constructor(...args: ConstructorParameters<typeof EventSource>) {
      super(...args);
      opened.add(this);
    }
  };
  t.teardown(() => {
    for (const source of opened) source.close();
  });
}
