// "An event stream is read as the WHATWG standard says an EventSource reads it" (sdk/src/event-stream.ts,
// read from the package as built): the same events and reconnection times from a stream however
// its bytes are cut into chunks (at every byte boundary, one byte at a time), with CRLF, LF and CR
// line ends, comments and heartbeats, multi-line data, ids that persist, retry fields, unknown
// fields, UTF-8 split inside a character, a leading BOM, and an unfinished event at the end.
import t, { type Test } from 'tap';

interface StreamEvent {
  readonly type: string;
  readonly data: string;
  readonly lastEventId: string;
}
interface Parser {
  push(chunk: Uint8Array): void;
  end(): void;
}

const { EventStreamParser, MAX_EVENT_CHARS } = (await import(new URL('./event-stream.js', import.meta.resolve('@bestex/sdk')).href)) as {
  EventStreamParser: new (handlers: { onEvent: (event: StreamEvent) => void; onRetry?: (ms: number) => void }) => Parser;
  MAX_EVENT_CHARS: number;
};

type Read = Array<StreamEvent | { retry: number }>;

/** What the parser reads of `chunks`, events and reconnection times in the order they came. */
function read(chunks: readonly Uint8Array[]): Read {
  const seen: Read = [];
  const parser = new EventStreamParser({ onEvent: (event) => seen.push(event), onRetry: (retry) => seen.push({ retry }) });
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return seen;
}

const bytes = (text: string) => new TextEncoder().encode(text);

/** `stream` read whole, cut in two at every byte boundary, and one byte at a time: all must read the same. */
function readEveryWay(t: Test, stream: string | Uint8Array, expected: Read): void {
  const whole = typeof stream === 'string' ? bytes(stream) : stream;
  t.strictSame(read([whole]), expected, 'read whole');
  let same = 0;
  for (let cut = 0; cut <= whole.length; cut += 1) {
    const split = read([whole.subarray(0, cut), whole.subarray(cut)]);
    if (JSON.stringify(split) === JSON.stringify(expected)) same += 1;
    else t.strictSame(split, expected, `cut at byte ${cut}`);
  }
  t.equal(same, whole.length + 1, `the same cut at each of its ${whole.length + 1} byte boundaries`);
  t.strictSame(read(Array.from(whole, (byte) => Uint8Array.of(byte))), expected, 'one byte at a time');
}

const STATUS_1 = '{"type":"plan.planned","planId":"pl_0000000000000000000000","seq":1}';
const STATUS_2 = '{"type":"plan.completed","planId":"pl_0000000000000000000000","seq":2,"received":"14.9549254496"}';

t.test('the stream the spec gives (retry, then status events with their ids, a heartbeat between them), with LF, CRLF and CR line ends', async (t) => {
  const lines = ['retry: 2000', '', 'event: status', 'id: 1', `data: ${STATUS_1}`, '', ': heartbeat', '', 'event: status', 'id: 2', `data: ${STATUS_2}`, ''];
  const expected: Read = [{ retry: 2000 }, { type: 'status', data: STATUS_1, lastEventId: '1' }, { type: 'status', data: STATUS_2, lastEventId: '2' }];
  for (const [name, end] of [['LF', '\n'], ['CRLF', '\r\n'], ['CR', '\r']] as const) {
    await t.test(name, async (t) => readEveryWay(t, lines.map((line) => line + end).join(''), expected));
  }
  await t.test('line ends mixed in one stream', async (t) => readEveryWay(t, lines.map((line, i) => line + ['\n', '\r\n', '\r'][i % 3]).join(''), expected));
});

t.test('"data" lines join with LF; an empty data line is an empty line of data; an event without data is not dispatched', async (t) => {
  readEveryWay(t, 'data: first\ndata:second\ndata\ndata:  two spaces\n\nevent: status\n\ndata:\n\n', [
    { type: 'message', data: 'first\nsecond\n\n two spaces', lastEventId: '' },
    { type: 'message', data: '', lastEventId: '' },
  ]);
});

t.test('comments and heartbeats dispatch nothing, even between the lines of one event', async (t) => {
  readEveryWay(t, ': heartbeat\n\n:\n\nevent: status\n: heartbeat\ndata: a\n:data: not data\ndata: b\n\n: heartbeat\n', [{ type: 'status', data: 'a\nb', lastEventId: '' }]);
});

t.test('"id" stays until the next one, an empty one clears it, one holding NUL is ignored; "event" lasts one event', async (t) => {
  readEveryWay(t, 'id: 7\nevent: status\ndata: a\n\ndata: b\n\nid: 8\u0000\ndata: c\n\nid\ndata: d\n\n', [
    { type: 'status', data: 'a', lastEventId: '7' },
    { type: 'message', data: 'b', lastEventId: '7' },
    { type: 'message', data: 'c', lastEventId: '7' },
    { type: 'message', data: 'd', lastEventId: '' },
  ]);
});

t.test('"retry" is taken only as ASCII digits; unknown fields and a field\'s second space are kept out', async (t) => {
  readEveryWay(t, 'retry: 10\nretry: 2s\nretry:\nretry: -5\nretry:1500\nretry:  300\nfoo: bar\nevent:status\nid:3\nDATA: no\ndata:x\n\n', [
    { retry: 10 },
    { retry: 1500 },
    { type: 'status', data: 'x', lastEventId: '3' },
  ]);
});

t.test('UTF-8 cut inside a character reads whole, and a leading byte-order mark is dropped', async (t) => {
  const stream = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('data: 1 \u20ac, caf\u00e9, \u{1f600}\n\n')]);
  readEveryWay(t, stream, [{ type: 'message', data: '1 \u20ac, caf\u00e9, \u{1f600}', lastEventId: '' }]);
});

t.test('an event left unfinished when the stream ends is discarded, and a CR last in a chunk ends its line at once', async (t) => {
  readEveryWay(t, 'data: whole\n\nevent: status\nid: 3\ndata: {"half', [{ type: 'message', data: 'whole', lastEventId: '' }]);
  const seen: StreamEvent[] = [];
  const parser = new EventStreamParser({ onEvent: (event) => seen.push(event) });
  parser.push(bytes('data: now\r\r'));
  t.strictSame(seen, [{ type: 'message', data: 'now', lastEventId: '' }], 'dispatched before the next chunk says whether an LF follows');
  parser.push(bytes('\ndata: next\n\n'));
  t.equal(seen.length, 2, 'an LF after a chunk\'s last CR is no second line end');
});

t.test('a line or an event longer than the contract\'s stream is refused, not kept', async (t) => {
  const parser = new EventStreamParser({ onEvent: () => undefined });
  t.throws(() => parser.push(bytes('data: ' + 'x'.repeat(MAX_EVENT_CHARS + 1))), RangeError);
  const lines = new EventStreamParser({ onEvent: () => undefined });
  const line = `data: ${'x'.repeat(1000)}\n`;
  t.throws(() => {
    for (let i = 0; i <= MAX_EVENT_CHARS / 1000; i += 1) lines.push(bytes(line));
  }, RangeError);
});
