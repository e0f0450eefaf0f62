// A v2 plan's status events as the spec shapes them (PlanStatusEvent, its single-venue status), and
// as its event stream carries them, for the tests that play the service's side of GET
// /api/v2/plan/events.
import type { V2 } from '@bestex/sdk';

export interface EventOptions {
  /** What the plan received, on a completed state. */
  readonly received?: string;
  readonly venueId?: string;
}

/**
 * The plan's event `seq`, having gone through `states` (its first `seq` of them), as the service
 * would send it: the status's state is the `seq`-th state, its history every state up to it.
 */
export function statusEvent(planId: string, states: readonly V2.PlanState[], seq: number, options: EventOptions = {}): V2.PlanStatusEvent {
  const state = states[seq - 1];
  if (!state) throw new Error(`no state ${seq} in ${states.join(', ')}`);
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  const terminal = !['awaiting_signature', 'planned', 'deposit_seen'].includes(state);
  const received = state === 'completed' ? (options.received ?? '14.9549254496') : null;
  return {
    type: `plan.${state}`,
    planId,
    seq,
    at,
    status: {
      planId,
      state,
      terminal,
      seq,
      updatedAt: at,
      expiry: '2026-01-01T00:01:30.000Z',
      pair: { give: 'Amulet', want: 'USDCx' },
      amount: '100',
      minReceive: '14.8801876',
      received,
      legs: [
        {
          leg: 0,
          venueId: options.venueId ?? 'tradecraft',
          amount: '100',
          minReceive: '14.8801876',
          state,
          basis: 'ledger',
          depositUpdateId: seq >= 2 ? '1220ab' : null,
          settlementUpdateId: terminal ? '1220cd' : null,
          received,
        },
      ],
      history: states.slice(0, seq).map((s, i) => ({ state: s, seq: i + 1, at })),
    },
  };
}

/** An event as the stream carries it: `event: status`, its seq as its id, its data on one line. */
export const sse = (event: V2.PlanStatusEvent): string => `event: status\nid: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
