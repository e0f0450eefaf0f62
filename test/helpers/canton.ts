// What the tests of Canton's official packages against the sandbox share: the token standard's
// interface ids, amounts compared as numbers, fresh party hints, a token's claims, a refusal.
import { randomUUID } from 'node:crypto';
import { Decimal } from '../../core/decimal.js';

export const HOLDING = '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding';
export const TRANSFER_INSTRUCTION = '#splice-api-token-transfer-instruction-v1:Splice.Api.Token.TransferInstructionV1:TransferInstruction';
export const TRANSFER_FACTORY = '#splice-api-token-transfer-instruction-v1:Splice.Api.Token.TransferInstructionV1:TransferFactory';

/** A logger that says nothing, for the packages that want one. */
export const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** An amount as a number would read it: the packages and the ledger pad differently. */
export const norm = (amount: unknown) => new Decimal(String(amount)).toString();

/** A party hint no other test uses. */
export const hint = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

/** The claims of a JWT-shaped token, which is all the packages read of it. */
export const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: string };

/** The rejection of `promise`: the packages rethrow the participant's JSON error body as it is. */
export async function refusal(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected the participant to refuse');
}
