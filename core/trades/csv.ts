// A partner's trades as CSV (RFC 4180: a header row, CRLF line ends, a field quoted when it holds a
// comma, a quote or a line end), one row per plan, its legs' venues and settlement update ids
// joined with `;` in leg order.
import type { Trade } from '../contract/portal.js';

const CSV_COLUMNS = [
  'planId',
  'createdAt',
  'updatedAt',
  'state',
  'give',
  'want',
  'amount',
  'net',
  'minReceive',
  'received',
  'slippageBps',
  'venues',
  'settlementUpdateIds',
  'feeToken',
  'disclosedServiceFee',
  'disclosedIntegratorFee',
  'collectedServiceFee',
  'collectedIntegratorFee',
  'takerRef',
] as const;

const field = (value: string | null): string => (value === null ? '' : /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

function rowOf(t: Trade): Array<string | null> {
  return [
    t.planId,
    t.createdAt,
    t.updatedAt,
    t.state,
    t.pair.give,
    t.pair.want,
    t.amount,
    t.net,
    t.minReceive,
    t.received,
    t.slippageBps,
    t.legs.map((l) => l.venueId).join(';'),
    t.legs.map((l) => l.settlementUpdateId ?? '').join(';').replace(/^;+$/, ''),
    t.fees.token,
    t.fees.disclosed.service,
    t.fees.disclosed.integrator,
    t.fees.collected.service,
    t.fees.collected.integrator,
    t.takerRef,
  ];
}

const line = (row: ReadonlyArray<string | null>): string => `${row.map(field).join(',')}\r\n`;

/** The header line. */
export const CSV_HEADER = line(CSV_COLUMNS);

/** The trades' lines, to follow the header (a range is written a page at a time). */
export const csvLines = (trades: readonly Trade[]): string => trades.map((t) => line(rowOf(t))).join('');
