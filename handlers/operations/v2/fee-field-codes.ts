// The integrator's fee parameters, as both v2 operations that take them (a keyed quote, a partner
// plan) refuse them: here, so that neither operation imports the other.
import type { FieldCodes } from '../../http/validation-error.js';

/** The integrator's fee parameters answer bad_fee_params when malformed, on quotes and partner plans. */
export const FEE_FIELD_CODES: FieldCodes = new Map([
  ['feeBps', 'bad_fee_params'],
  ['feeRecipient', 'bad_fee_params'],
]);
