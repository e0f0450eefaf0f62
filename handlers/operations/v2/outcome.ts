// GET /api/v2/outcome: what became of a swap, read from the ledger, or for an intent plan named by
// its planId, from the venue's status of its intent. The query holds the taker's party, so it is
// never remembered by URL (rememberQueries stays off) and never logged.
import { parseOutcomeQuery, type OutcomeService } from '../../../core/outcomes/outcomes.js';
import type { GetOutcomeQuery } from '../../../core/contract/v2.js';
import { json, type OperationHandler } from '../../http/operation.js';

export const outcomeHandler = (outcomes: OutcomeService): OperationHandler<GetOutcomeQuery> => ({
  async handle({ query, annotate }) {
    const outcome = await outcomes.outcomeOf(parseOutcomeQuery(query), query.planId);
    annotate({ outcome: outcome.status });
    // An outcome changes as the swap proceeds, and is one taker's: no cache may keep it.
    return json(200, outcome, 'no-store');
  },
});
