// GET /api/v2/tokens: every token, its registry and each venue's limits, from the core's token list.
import type { TokenList } from '../../../core/contract/v2.js';
import { json, type OperationHandler } from '../../http/operation.js';

export const tokensHandler = (tokenList: () => TokenList): OperationHandler => ({
  handle: () => json(200, tokenList(), 'public, s-maxage=60'),
});
