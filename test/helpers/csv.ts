// Reads CSV as RFC 4180 writes it (quoted fields with doubled quotes, CRLF or LF line ends): what a
// partner's spreadsheet or script does with the trade ledger's export; and the row a trade the API
// lists is expected as in it.
import type { Trade } from '../../core/contract/portal.js';

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** The rows after the header, each as an object by the header's names. */
export function csvRecords(text: string): Array<Record<string, string>> {
  const [header = [], ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

/** The export's row of `trade` as the API lists it, by column: the rule the CSV keeps, written from the columns' documentation. */
export function expectedCsvRecord(trade: Trade): Record<string, string> {
  return {
    planId: trade.planId,
    createdAt: trade.createdAt,
    updatedAt: trade.updatedAt,
    state: trade.state,
    give: trade.pair.give,
    want: trade.pair.want,
    amount: trade.amount,
    net: trade.net,
    minReceive: trade.minReceive,
    received: trade.received ?? '',
    slippageBps: trade.slippageBps ?? '',
    venues: trade.legs.map((l) => l.venueId).join(';'),
    settlementUpdateIds: trade.legs.some((l) => l.settlementUpdateId !== null) ? trade.legs.map((l) => l.settlementUpdateId ?? '').join(';') : '',
    feeToken: trade.fees.token,
    disclosedServiceFee: trade.fees.disclosed.service,
    disclosedIntegratorFee: trade.fees.disclosed.integrator,
    collectedServiceFee: trade.fees.collected.service,
    collectedIntegratorFee: trade.fees.collected.integrator,
    takerRef: trade.takerRef,
  };
}
