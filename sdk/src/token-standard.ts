// The Canton Network Token Standard (CIP-0056) as the SDK uses it: the interfaces it reads and
// exercises, by package name (as filters and commands may name them), the choices of a two-step
// transfer, and where a transfer's memo rides. Events name an interface by package id; both end in
// the same `Module:Entity`, which is what the SDK matches events on.
const iface = (packageName: string, entity: string) => ({ id: `#${packageName}:${entity}`, entity }) as const;

export const HOLDING = iface('splice-api-token-holding-v1', 'Splice.Api.Token.HoldingV1:Holding');
export const TRANSFER_INSTRUCTION = iface('splice-api-token-transfer-instruction-v1', 'Splice.Api.Token.TransferInstructionV1:TransferInstruction');
export const TRANSFER_FACTORY = iface('splice-api-token-transfer-instruction-v1', 'Splice.Api.Token.TransferInstructionV1:TransferFactory');

export const CHOICES = {
  transfer: 'TransferFactory_Transfer',
  accept: 'TransferInstruction_Accept',
  reject: 'TransferInstruction_Reject',
  withdraw: 'TransferInstruction_Withdraw',
} as const;

/** Where a transfer's memo rides: a plan's deposit carries its floor here. */
export const REASON_KEY = 'splice.lfdecentralizedtrust.org/reason';

/** Whether an interface or template id, by package id or by package name, names `entity`. */
export function namesEntity(id: string | null | undefined, entity: string): boolean {
  if (!id) return false;
  const at = id.indexOf(':');
  return at >= 0 && id.slice(at + 1) === entity;
}
