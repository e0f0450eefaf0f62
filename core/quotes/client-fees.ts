// The disclosed fee block of a keyed quote (and, later, a plan): the service's line, the
// integrator's line and what the user receives, all in the want instrument. Fee amounts round
// down, in the user's favour, so neither line ever takes more than its rate; userReceives is then
// exactly net - service - integrator, with nothing left to round.
import { BPS, floor10, toWire, ZERO, type Decimal } from '../decimal.js';
import { DomainError } from '../errors.js';
import type { FeeTerms } from './fee-schemas.js';
import type { IntegratorFeeParams } from './params.js';
import type { ClientFees } from '../contract/v1.js';

const feeOf = (net: Decimal, bps: number): Decimal => (bps === 0 ? ZERO : floor10(net.times(bps).times(BPS)));

/**
 * The fee block for a venue's `net`. While fee collection is paused every line reads zero (rate
 * and amount), and the integrator's line still names its recipient.
 */
export function clientFees(net: Decimal, terms: FeeTerms, integrator: IntegratorFeeParams | null, collecting: boolean): ClientFees {
  const serviceBps = collecting ? terms.serviceBps : 0;
  const integratorBps = collecting && integrator ? integrator.bps : 0;
  const service = feeOf(net, serviceBps);
  const integratorFee = feeOf(net, integratorBps);
  return {
    integrator: integrator ? { bps: integratorBps, amount: toWire(integratorFee), recipient: integrator.recipient } : null,
    service: { bps: serviceBps, amount: toWire(service) },
    userReceives: toWire(net.minus(service).minus(integratorFee)),
  };
}

/** Refuses an integrator fee over the partner's cap (the spec's 10 bps, or a lower negotiated one). */
export function checkIntegratorCap(integrator: IntegratorFeeParams | null, terms: FeeTerms): void {
  if (integrator && integrator.bps > terms.integratorCapBps) {
    throw new DomainError('bad_fee_params', `'feeBps' ${integrator.bps} is over this key's cap of ${terms.integratorCapBps} bps`);
  }
}
