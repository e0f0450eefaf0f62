// The Daml packages the sandbox participant has, and the ids they define: its token
// implementation's templates and the token standard's interfaces, as events and filters name them.
import { BATCHING_UTILITY_PACKAGE } from './batching-utility.js';

/**
 * The sandbox's Daml packages, by id, name and version: its token implementation, and the token standard's
 * interface packages, uploaded as on every Splice participant (the allocation and metadata ones
 * too, though no sandbox contract implements them, so a wallet's filter on them reads nothing).
 */
export const PACKAGES = {
  token: { id: '5a'.repeat(32), name: 'sandbox-token', version: '1.0.0' },
  holdingApi: { id: '71'.repeat(32), name: 'splice-api-token-holding-v1', version: '1.0.0' },
  transferApi: { id: '72'.repeat(32), name: 'splice-api-token-transfer-instruction-v1', version: '1.0.0' },
  allocationApi: { id: '73'.repeat(32), name: 'splice-api-token-allocation-v1', version: '1.0.0' },
  allocationInstructionApi: { id: '74'.repeat(32), name: 'splice-api-token-allocation-instruction-v1', version: '1.0.0' },
  allocationRequestApi: { id: '75'.repeat(32), name: 'splice-api-token-allocation-request-v1', version: '1.0.0' },
  metadataApi: { id: '76'.repeat(32), name: 'splice-api-token-metadata-v1', version: '1.0.0' },
  /** Splice's batching utility: on a participant that has it (the participant decides). */
  batchingUtility: BATCHING_UTILITY_PACKAGE,
} as const;

/** The token standard's interfaces no sandbox template implements, which filters may still name. */
export const UNIMPLEMENTED_INTERFACES = [
  `${PACKAGES.allocationApi.id}:Splice.Api.Token.AllocationV1:Allocation`,
  `${PACKAGES.allocationInstructionApi.id}:Splice.Api.Token.AllocationInstructionV1:AllocationFactory`,
  `${PACKAGES.allocationInstructionApi.id}:Splice.Api.Token.AllocationInstructionV1:AllocationInstruction`,
  `${PACKAGES.allocationRequestApi.id}:Splice.Api.Token.AllocationRequestV1:AllocationRequest`,
  `${PACKAGES.metadataApi.id}:Splice.Api.Token.MetadataV1:AnyContract`,
] as const;

const PACKAGE = {
  token: `${PACKAGES.token.id}:Sandbox.Token`,
  holdingApi: `${PACKAGES.holdingApi.id}:Splice.Api.Token.HoldingV1`,
  transferApi: `${PACKAGES.transferApi.id}:Splice.Api.Token.TransferInstructionV1`,
} as const;

/** The package name of the sandbox's token implementation, as events carry it. */
export const TOKEN_PACKAGE_NAME = PACKAGES.token.name;

export const TEMPLATES = {
  holding: `${PACKAGE.token}:Holding`,
  instruction: `${PACKAGE.token}:TransferInstruction`,
  factory: `${PACKAGE.token}:TransferFactory`,
} as const;

export const INTERFACES = {
  holding: `${PACKAGE.holdingApi}:Holding`,
  instruction: `${PACKAGE.transferApi}:TransferInstruction`,
  factory: `${PACKAGE.transferApi}:TransferFactory`,
} as const;
