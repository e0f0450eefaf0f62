// GET /api/v2/plan/status and GET /api/v2/plan/events: a v2 plan's status, read by the key that
// made it or a keyless plan's capability (`token`), now or as server-sent events. The query holds
// the capability, so it is never remembered by URL (rememberQueries stays off) and never logged.
import { PassThrough } from 'node:stream';
import { badRequest } from '../../../core/errors.js';
import type { PlanStatusService, StatusReader } from '../../../core/plan-status/service.js';
import type { GetPlanStatusQuery, PlanStatusEvent, PlanViewReport, StreamPlanStatusQuery } from '../../../core/contract/v2.js';
import { json, type OperationContext, type OperationHandler } from '../../http/operation.js';

const readerOf = ({ partner, query }: OperationContext<{ readonly token?: string }>): StatusReader => ({ partnerId: partner?.id ?? null, token: query.token ?? null });

export const planStatusHandler = (statuses: PlanStatusService): OperationHandler<GetPlanStatusQuery> => ({
  async handle(context) {
    const status = await statuses.status(context.query.planId, readerOf(context));
    // A status changes as the plan proceeds, and is one caller's: no cache may keep it.
    return json(200, status, 'no-store');
  },
});

const LAST_EVENT_ID = /^[0-9]{1,10}$/;

/** The seq after which a stream starts: Last-Event-ID, else `lastEventId`, else null (the latest event only). */
export function resumeAfter(header: string | undefined, query: string | undefined): number | null {
  if (header !== undefined) {
    if (!LAST_EVENT_ID.test(header)) throw badRequest("header 'Last-Event-ID' must be an event's seq: 1 to 10 digits");
    return Number(header);
  }
  return query === undefined ? null : Number(query);
}

/** One event as the stream writes it. */
export const eventText = (event: PlanStatusEvent): string => `event: status\nid: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;

export const planEventsHandler = (statuses: PlanStatusService, heartbeatMs: number): OperationHandler<StreamPlanStatusQuery> => ({
  async handle(context) {
    const { planId } = context.query;
    const after = resumeAfter(context.header('last-event-id'), context.query.lastEventId);
    // Listening before reading what is kept: an event appended between the two is buffered, not lost.
    const early: PlanStatusEvent[] = [];
    let deliver: (event: PlanStatusEvent) => void = (event) => early.push(event);
    let end = () => {};
    const stop = await statuses.watch(planId, (event) => deliver(event), () => end());
    let kept: PlanStatusEvent[];
    let over: boolean;
    try {
      ({ events: kept, over } = await statuses.eventsAfter(planId, readerOf(context), after));
    } catch (err) {
      stop();
      throw err;
    }
    const stream = new PassThrough();
    let sent = after ?? (kept[0] ? kept[0].seq - 1 : 0);
    let heartbeat: NodeJS.Timeout | undefined;
    end = () => {
      stop();
      clearInterval(heartbeat);
      if (!stream.writableEnded) stream.end();
    };
    deliver = (event) => {
      if (event.seq !== sent + 1 || stream.writableEnded) return;
      sent = event.seq;
      stream.write(eventText(event));
      if (event.status.terminal) end();
    };
    stream.on('close', end);
    stream.write('retry: 2000\n\n');
    for (const event of [...kept, ...early]) deliver(event);
    // The client holds every event of a plan that is over: nothing will follow.
    if (over && kept.length === 0) end();
    if (!stream.writableEnded) {
      heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), heartbeatMs);
      heartbeat.unref();
    }
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
      body: stream,
    };
  },
});

export const planReportHandler = (statuses: PlanStatusService): OperationHandler<unknown, PlanViewReport> => ({
  async handle({ body, partner }) {
    const receipt = await statuses.report(body.planId, { partnerId: partner?.id ?? null, token: body.token ?? null }, body.legs);
    return json(202, receipt, 'no-store');
  },
});
