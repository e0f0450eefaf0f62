// What the tests of Canton's official packages against the sandbox share: the token standard's
// interface ids, amounts compared as numbers, fresh party hints, a token's claims, a refusal, and
// external parties onboarded through wallet-sdk.
import { randomUUID } from 'node:crypto';
import type { SDK } from '@canton-network/wallet-sdk';
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

type WalletSdk = Awaited<ReturnType<typeof SDK.create>>;

/**
 * External parties onboarded through wallet-sdk, each with a key of its own, all of them at once
 * when the first is asked for: wallet-sdk's onboarding sleeps 2 s after each look for the new
 * party, the first included, so onboarded one test at a time each would wait its own 2 s. Each
 * name (a party hint) is one test's party.
 */
export function externalParties<Name extends string>(sdk: WalletSdk, names: readonly Name[]) {
  const onboard = async (name: string) => {
    const keys = sdk.keys.generate();
    const party = await sdk.party.external.create(keys.publicKey, { partyHint: hint(name) }).sign(keys.privateKey).execute();
    return { partyId: party.partyId, fingerprint: party.publicKeyFingerprint, keys };
  };
  let onboarding: Map<string, ReturnType<typeof onboard>> | undefined;
  return (name: Name): ReturnType<typeof onboard> => {
    onboarding ??= new Map(
      names.map((each) => {
        const onboarded = onboard(each);
        // A test left out (a filtered run) never awaits its party: its failure is not an unhandled one.
        onboarded.catch(() => undefined);
        return [each, onboarded];
      }),
    );
    return onboarding.get(name)!;
  };
}
