// The key portal's trade ledger operations (openapi/portal.yaml, tag trades): each reads its
// validated query, makes one call to the trade ledger (core/trades/) for the signed-in key's
// record id and shapes the answer; the export is CSV text, named by its range.
import type * as Portal from '../../../core/contract/portal.js';
import type { TradeLedger } from '../../../core/trades/ledger.js';
import type { HandlerMap, OperationHandler, OperationResult } from '../../http/operation.js';

const NO_STORE = Object.freeze({ 'cache-control': 'no-store' });

const answer = (status: number, body: unknown): OperationResult => ({ status, headers: NO_STORE, body });

export function tradeOperations(trades: TradeLedger): HandlerMap {
  const listPartnerTrades: OperationHandler<Portal.ListPartnerTradesQuery> = {
    async handle({ partner, query, annotate }) {
      const page = await trades.page(partner!.id, query ?? {});
      annotate({ portalAction: 'trades-viewed' });
      return answer(200, page);
    },
  };
  const getPartnerTradeSummary: OperationHandler<Portal.GetPartnerTradeSummaryQuery> = {
    async handle({ partner, query, annotate }) {
      const summary = await trades.summary(partner!.id, query ?? {});
      annotate({ portalAction: 'trades-summarised' });
      return answer(200, summary);
    },
  };
  const exportPartnerTrades: OperationHandler<Portal.ExportPartnerTradesQuery> = {
    async handle({ partner, query, annotate }) {
      const { text, range } = await trades.csv(partner!.id, query ?? {});
      annotate({ portalAction: 'trades-exported' });
      return {
        status: 200,
        headers: { ...NO_STORE, 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="bestex-trades-${range.from}-${range.to}.csv"` },
        body: text,
      };
    },
  };
  return { listPartnerTrades, getPartnerTradeSummary, exportPartnerTrades };
}
