// The Canton Network Token Standard (CIP-0056) as bestex reads it off the ledger and exercises it:
// the interfaces, choices and result tags of a two-step transfer, and where a transfer's memo rides.
// Events name an interface by package id (`<hash>:Module:Entity`); filters and commands may name it
// by package name (`#<package-name>:Module:Entity`). Both end in the same `Module:Entity`, which is
// what events are matched on. The one source of this vocabulary: `make generate` copies it into the
// SDK (sdk/src/generated/token-standard.ts), which imports no server code, and `make
// check-generated` fails when that copy is stale.

/**
 * An interface of the standard: its id by package name, as a filter's `interfaceId` or a command's
 * `templateId` takes it (`filterId`), and the `Module:Entity` events are matched on.
 */
const iface = (packageName: string, entity: string) => ({ filterId: `#${packageName}:${entity}`, entity }) as const;

export const TRANSFER_INSTRUCTION = iface('splice-api-token-transfer-instruction-v1', 'Splice.Api.Token.TransferInstructionV1:TransferInstruction');
export const TRANSFER_FACTORY = iface('splice-api-token-transfer-instruction-v1', 'Splice.Api.Token.TransferInstructionV1:TransferFactory');
export const HOLDING = iface('splice-api-token-holding-v1', 'Splice.Api.Token.HoldingV1:Holding');

export const CHOICES = {
  transfer: 'TransferFactory_Transfer',
  accept: 'TransferInstruction_Accept',
  reject: 'TransferInstruction_Reject',
  withdraw: 'TransferInstruction_Withdraw',
} as const;

export const RESULTS = {
  completed: 'TransferInstructionResult_Completed',
  failed: 'TransferInstructionResult_Failed',
  pending: 'TransferInstructionResult_Pending',
} as const;

/** The metadata key of a transfer's memo (CIP-0056): a plan's deposit carries its floor here. */
export const REASON_KEY = 'splice.lfdecentralizedtrust.org/reason';

/** Whether an event's interface or template id names `entity`, by package id or package name. */
export function namesEntity(id: string | null | undefined, entity: string): boolean {
  if (!id) return false;
  const at = id.indexOf(':');
  return at >= 0 && id.slice(at + 1) === entity;
}
