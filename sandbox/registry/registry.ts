// The sandbox's token registries, as Splice's token standard defines a registry's off-ledger API
// (transfer-instruction v1 and metadata v1): one per instrument admin. The transfer factory is the
// admin's contract, which no wallet's party can see, so every answer discloses it with its
// created-event blob for the wallet to pass on in its submission, as a public registry does.
// Refusals are the standard's `{error}`.
import { TOKENS } from '../../core/tokens.js';
import { createdEventBlob } from '../ledger/event-format.js';
import type { SandboxLedger } from '../ledger/sandbox-ledger.js';

export interface RegistryReply {
  readonly status: number;
  readonly body: unknown;
}

const refuse = (status: number, error: string): RegistryReply => ({ status, body: { error } });

/** The path each admin's registry is served under on the registry server, and its name in the metadata. */
export const REGISTRY_PATHS: Readonly<Record<string, string>> = { Amulet: '/amulet', USDCx: '/usdcx', CBTC: '/cbtc' };

const SUPPORTED_APIS = { 'splice-api-token-metadata-v1': 1, 'splice-api-token-holding-v1': 1, 'splice-api-token-transfer-instruction-v1': 1 };

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** The disclosure of a contract, as a registry hands it to a wallet. */
function disclosed(ledger: SandboxLedger, contractId: string, synchronizerId: string, debug: boolean) {
  const life = ledger.contract(contractId)!;
  return {
    templateId: life.created.templateId, contractId, createdEventBlob: createdEventBlob(life.created), synchronizerId,
    ...(debug ? { debugPackageName: life.created.packageName, debugPayload: life.created.createArgument, debugCreatedAt: life.createdIn.recordTime } : {}),
  };
}

/**
 * The registry of `admin`'s instruments: `path` is the request's path under the registry's base.
 * `null` when the path is not one of the registry's.
 */
export function registryAnswer(ledger: SandboxLedger, synchronizerId: string, admin: string, method: string, path: string, body: unknown): RegistryReply | null {
  const instruments = TOKENS.filter((t) => ledger.admins[t.instrument] === admin);
  if (method === 'GET' && path === '/registry/metadata/v1/info') return { status: 200, body: { adminId: admin, supportedApis: SUPPORTED_APIS } };
  if (method === 'GET' && path === '/registry/metadata/v1/instruments') {
    return { status: 200, body: { instruments: instruments.map(instrumentOf) } };
  }
  const instrument = /^\/registry\/metadata\/v1\/instruments\/([^/]+)$/.exec(path);
  if (method === 'GET' && instrument) {
    const found = instruments.find((t) => t.instrument === decodeURIComponent(instrument[1]!));
    return found ? { status: 200, body: instrumentOf(found) } : refuse(404, `no instrument ${decodeURIComponent(instrument[1]!).slice(0, 80)} in this registry`);
  }
  const context = /^\/registry\/transfer-instruction\/v1\/([^/]+)\/choice-contexts\/(accept|reject|withdraw)$/.exec(path);
  if (method === 'POST' && path === '/registry/transfer-instruction/v1/transfer-factory') return transferFactory(ledger, synchronizerId, admin, body);
  if (method === 'POST' && context) {
    const cid = decodeURIComponent(context[1]!);
    const life = ledger.contract(cid);
    const view = life && !life.archivedIn ? record(record(life.created.views)?.[Object.keys(life.created.views)[0] ?? '']) : null;
    const instructionAdmin = record(record(view?.transfer)?.instrumentId)?.admin;
    if (!life || !ledger.isOpenInstruction(cid) || instructionAdmin !== admin) return refuse(404, 'no open transfer instruction of this registry has that contract id');
    return { status: 200, body: { choiceContextData: { values: {} }, disclosedContracts: [] } };
  }
  return null;
}

function instrumentOf(token: (typeof TOKENS)[number]) {
  return { id: token.instrument, name: token.instrument, symbol: token.symbol, decimals: 10, supportedApis: SUPPORTED_APIS };
}

function transferFactory(ledger: SandboxLedger, synchronizerId: string, admin: string, body: unknown): RegistryReply {
  const input = record(body);
  const args = record(input?.choiceArguments);
  if (!args) return refuse(400, 'choiceArguments is required: the TransferFactory_Transfer arguments the wallet will submit');
  if (args.expectedAdmin !== admin) return refuse(400, 'choiceArguments.expectedAdmin is not this registry\'s admin');
  const transfer = record(args.transfer);
  const instrumentId = record(transfer?.instrumentId);
  if (!transfer || !instrumentId || instrumentId.admin !== admin || !TOKENS.some((t) => t.instrument === instrumentId.id && ledger.admins[t.instrument] === admin)) {
    return refuse(400, 'choiceArguments.transfer.instrumentId must name an instrument of this registry');
  }
  const factoryId = ledger.factories.get(admin)!;
  const debug = input?.excludeDebugFields !== true;
  // The sandbox's token settles every transfer in two steps: the receiver accepts an instruction.
  return {
    status: 200,
    body: { factoryId, transferKind: 'offer', choiceContext: { choiceContextData: { values: {} }, disclosedContracts: [disclosed(ledger, factoryId, synchronizerId, debug)] } },
  };
}
