// Assembles an execution plan from the chosen venue's quote: the pinned floor, the deposit step,
// the fee legs when fees are collected, and the disclosure. Pure: every input is given, so the
// guardrail (core/plans/guardrail.ts) can check the result against the same inputs independently.
import { clientFees } from '../quotes/client-fees.js';
import { BPS, floor10, toWire, type Decimal } from '../decimal.js';
import type { FeeTerms } from '../quotes/fee-schemas.js';
import type { PlanParams, PlanRoute } from './params.js';
import { PLAN_VALIDITY_MS } from '../plan-validity.js';
import { minReceive } from '../quotes/math.js';
import { CC } from '../tokens.js';
import type { AppPlan, B2cFee, ClientFees, PlanStep } from '../contract/v1.js';

/** Where a plan may send funds: the venue's deposit target, and the fee parties. */
export interface PlanParties {
  /**
   * Where the deposit goes: the venue's pool party for the pair (memo-floor), or the party the
   * venue's own terms name for this swap (swap-address-memo: Nightly's swapAddress).
   */
  readonly pool: string;
  /** The partner route's service fee party. */
  readonly serviceFee: string | null;
  /** The keyless route's service fee party. */
  readonly b2cFee: string | null;
}

/**
 * The deposit's terms where the venue sets them for the taker (swap-address-memo: Nightly's quote
 * with the taker as recipient); the party they name is `PlanParties.pool`.
 */
export interface VenueDepositTerms {
  /** The venue's own memo, exactly as it gave it: the transfer's reason. */
  readonly memo: string;
  /** The least the venue is bound to pay the taker, in wire form: never below the plan's floor. */
  readonly minOut: string;
}

export interface PlanInputs {
  readonly route: PlanRoute;
  readonly params: PlanParams;
  /** The chosen venue's `net` in the quote the plan is built from, and that quote's time. */
  readonly net: Decimal;
  readonly asOf: string;
  readonly terms: FeeTerms;
  readonly collecting: boolean;
  readonly parties: PlanParties;
  /** Absent where the deposit's memo is the service's floor (memo-floor, and every v1 plan). */
  readonly venueTerms?: VenueDepositTerms;
  readonly planId: string;
  readonly createdAt: Date;
}

/** What a plan's figures are computed from: the request, the venue's net and the fee terms, never where funds go. */
export type FigureInputs = Pick<PlanInputs, 'route' | 'params' | 'net' | 'terms' | 'collecting' | 'createdAt'>;

/** The plan's numbers, derived from its inputs alone; the assembler and the guardrail both use them. */
export interface PlanFigures {
  readonly fees: ClientFees;
  readonly minReceive: string;
  readonly expiry: string;
  /** The keyless plan's b2cFee block, when it collects. */
  readonly b2cFee: B2cFee;
}

/**
 * The plan's figures, computed once per plan and frozen: the assembler and the guardrail read the
 * same numbers (computing them twice cost a plan as much as the guardrail's rules), and neither
 * can change them for the other.
 */
export function planFigures({ route, params, net, terms, collecting, createdAt }: FigureInputs): PlanFigures {
  const fees = clientFees(net, terms, route === 'partner' ? params.integratorFee : null, collecting);
  const { give, amount } = params.request;
  const b2cFee: B2cFee = {
    direction: give === CC ? 'input-cc' : 'output-cc',
    bps: fees.service.bps,
    // The fee's size in CC: bps of the CC input, or, on the CC output, the leg itself.
    ccAmount: give === CC ? toWire(floor10(amount.times(fees.service.bps).times(BPS))) : fees.service.amount,
  };
  return Object.freeze({
    fees: freezeFees(fees),
    minReceive: toWire(minReceive(net, params.slippageBps)),
    expiry: new Date(createdAt.getTime() + PLAN_VALIDITY_MS).toISOString(),
    b2cFee: Object.freeze(b2cFee),
  });
}

function freezeFees(fees: ClientFees): ClientFees {
  Object.freeze(fees.service);
  if (fees.integrator) Object.freeze(fees.integrator);
  return Object.freeze(fees);
}

export function assemblePlan(inputs: PlanInputs, figures: PlanFigures = planFigures(inputs)): AppPlan {
  const { route, params, net, asOf, terms, parties, planId, venueTerms } = inputs;
  const { give, want, amount } = params.request;
  const { fees, minReceive: floor, expiry, b2cFee } = figures;
  // memo-floor's memo is the floor the pool must pay; a venue that sets its own terms is bound by its memo instead.
  const memo = venueTerms?.memo ?? floor;
  const deposit: PlanStep = { kind: 'venue-deposit', target: parties.pool, instrument: give.instrument, amount: toWire(amount), memo, expiresAt: expiry };
  const leg = (kind: PlanStep['kind'], target: string | null, feeAmount: string, beneficiary?: PlanStep['beneficiary']): PlanStep[] => {
    // A zero fee moves nothing, so it has no leg; a fee with no party to receive it is a wiring fault.
    if (feeAmount === '0') return [];
    if (target === null) throw new Error(`a ${kind} leg of ${feeAmount} has no receiving party configured`);
    return [{ kind, target, instrument: want.instrument, amount: feeAmount, expiresAt: expiry, ...(beneficiary ? { beneficiary } : {}) }];
  };
  const feeLegs: PlanStep[] =
    route === 'app'
      ? leg('b2c-fee-transfer', parties.b2cFee, fees.service.amount)
      : [
          ...leg('fee-escrow-lock', parties.serviceFee, fees.service.amount, 'service'),
          ...leg('fee-transfer', fees.integrator?.recipient ?? null, fees.integrator?.amount ?? '0', 'integrator'),
        ];
  const collectsFees = feeLegs.length > 0;
  const plan: AppPlan = {
    planId,
    quoteRef: {
      venueId: params.venueId,
      pair: { give: give.instrument, want: want.instrument },
      amount: toWire(amount),
      asOf,
      net: toWire(net),
      minReceive: floor,
      clientFees: fees,
      appliedSchema: { schemaId: terms.schemaId, overrideId: terms.overrideId },
    },
    mode: 'managed-deposit',
    steps: [deposit, ...feeLegs],
    expiry,
    idempotencyKey: params.idempotencyKey,
    trustWindow: trustWindow(deposit, feeLegs, want.instrument, floor),
    collectsFees,
  };
  if (route === 'app' && collectsFees) plan.b2cFee = b2cFee;
  return plan;
}

/** What the user trusts and for how long, in plain words, from the steps themselves. */
function trustWindow(deposit: PlanStep, feeLegs: readonly PlanStep[], want: string, floor: string): string {
  const until = deposit.expiresAt;
  let text =
    `Your ${deposit.amount} ${deposit.instrument} stay locked in a transfer offer in your own wallet until the venue accepts it; ` +
    `if the venue does not accept by ${until} the offer expires and the funds stay yours.`;
  for (const step of feeLegs) {
    const whose = step.beneficiary === 'integrator' ? 'your integrator' : 'the service';
    const release =
      step.kind === 'fee-transfer'
        ? 'until your integrator accepts it'
        : `until the service accepts it, which it does only once the venue has paid you at least ${floor} ${want}`;
    text += ` The fee of ${step.amount} ${step.instrument} to ${whose} is offered in the same batch and stays locked in your wallet ${release}; if it is not accepted by ${until} it stays yours.`;
  }
  return text;
}
