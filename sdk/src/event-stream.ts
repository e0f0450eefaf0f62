// A text/event-stream read as the WHATWG HTML standard says an EventSource reads it ("Interpreting
// an event stream"), from bytes in chunks cut anywhere: UTF-8 decoded across chunks (a leading BOM
// dropped), lines ended by CRLF, LF or CR (a CR at a chunk's end and the LF that begins the next
// are one line end), comment lines (`:`) ignored, a field's value after its colon and one space,
// `data` lines joined by LF, `id` kept until the next one (one holding NUL is ignored), `retry`
// taken only as ASCII digits, unknown fields ignored, an event dispatched at a blank line when it
// has data, and an event left unfinished at the end discarded. `watch` reads the plan's status
// events with it, over fetch, which can send headers where an EventSource cannot.

/** One event as the stream dispatched it. */
export interface StreamEvent {
  /** The `event` field; `message` when the event named none. */
  readonly type: string;
  /** The `data` lines, joined by LF. */
  readonly data: string;
  /** The last `id` the stream gave, at or before this event ('' before any). */
  readonly lastEventId: string;
}

export interface EventStreamHandlers {
  readonly onEvent: (event: StreamEvent) => void;
  /** The stream's reconnection time (`retry`), in milliseconds. */
  readonly onRetry?: ((ms: number) => void) | undefined;
}

/** The longest line or event kept, in characters: the contract bounds a whole stream at 1,000,000. */
export const MAX_EVENT_CHARS = 1_000_000;

const LF = 10;
const CR = 13;

export class EventStreamParser {
  private readonly decoder = new TextDecoder('utf-8');
  /** The current line's text before the chunk being read. */
  private pending = '';
  /** The last chunk ended with a CR: an LF first in the next ends no second line. */
  private afterCR = false;
  private type = '';
  private data = '';
  private lastEventId = '';

  constructor(private readonly handlers: EventStreamHandlers) {}

  /** Reads a chunk of the stream's bytes; throws a RangeError once a line or an event outgrows MAX_EVENT_CHARS. */
  push(chunk: Uint8Array): void {
    this.read(this.decoder.decode(chunk, { stream: true }));
  }

  /** The stream ended: what is left of an unfinished line or event is discarded, as the standard says. */
  end(): void {
    this.decoder.decode();
    this.pending = '';
    this.afterCR = false;
    this.type = '';
    this.data = '';
  }

  private read(text: string): void {
    let start = 0;
    if (this.afterCR && text.length > 0) {
      if (text.charCodeAt(0) === LF) start = 1;
      this.afterCR = false;
    }
    for (let i = start; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code !== LF && code !== CR) continue;
      const line = this.pending + text.slice(start, i);
      this.pending = '';
      if (code === CR) {
        if (i + 1 === text.length) this.afterCR = true;
        else if (text.charCodeAt(i + 1) === LF) i += 1;
      }
      start = i + 1;
      this.line(line);
    }
    this.pending += text.slice(start);
    if (this.pending.length > MAX_EVENT_CHARS) throw new RangeError(`an event stream's line is longer than ${MAX_EVENT_CHARS} characters`);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.type = value;
    else if (field === 'data') {
      this.data += `${value}\n`;
      if (this.data.length > MAX_EVENT_CHARS) throw new RangeError(`an event stream's event is longer than ${MAX_EVENT_CHARS} characters`);
    } else if (field === 'id') {
      if (!value.includes('\0')) this.lastEventId = value;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) this.handlers.onRetry?.(Number(value));
  }

  private dispatch(): void {
    const { type, data } = this;
    this.type = '';
    this.data = '';
    if (data === '') return;
    this.handlers.onEvent({ type: type === '' ? 'message' : type, data: data.slice(0, -1), lastEventId: this.lastEventId });
  }
}
