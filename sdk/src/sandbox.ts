// '@bestex/sdk/sandbox': a CIP-0103 provider over the bestex sandbox ledger (`make run` or `make
// sandbox`), standing in for the user's wallet so the whole flow runs on one machine with nothing
// faked: `listAccounts`, `getPrimaryAccount`, `ledgerApi` (JSON Ledger API calls, with the
// sandbox's bearer token), `prepareExecute` (progress as `txChanged` events) and
// `prepareExecuteAndWait`, and `signMessage`. It signs no transaction: the sandbox ledger lets its
// token act as any party. It signs a message (a venue's sign-in challenge, such as OneSwap's) with
// an Ed25519 key it makes for its session, through WebCrypto, on first use (never on import): its
// account's `publicKey` is that key (base64 of the raw 32 bytes), as the sandbox's OneSwap takes
// it for a party its participant hosts.
import type { Fetch } from './platform.js';
import { PROVIDER_ERRORS, type CantonProvider, type PrepareExecuteParams } from './provider.js';
import { accountOf, providerShell, ProviderRpcError } from './provider-shell.js';
import { sessionSigner, type Ed25519Signer } from './signing.js';

export { ProviderRpcError };

export interface SandboxProviderOptions {
  /** The sandbox ledger's URL (its `ledger`, as `make sandbox` prints it, or DATA_DIR/sandbox.json says). */
  readonly ledgerUrl: string;
  /** The sandbox ledger's token (its `ledgerToken`). */
  readonly token: string;
  /** The party this wallet holds. */
  readonly party: string;
  readonly fetch?: Fetch | undefined;
}

const USER_ID = 'bestex-sandbox-wallet';

export function sandboxProvider(options: SandboxProviderOptions): CantonProvider {
  const base = options.ledgerUrl.replace(/\/+$/, '');
  const fetcher = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));

  async function call(requestMethod: string, resource: string, body?: unknown, query?: Record<string, string>): Promise<unknown> {
    const search = query && Object.keys(query).length > 0 ? `${resource.includes('?') ? '&' : '?'}${new URLSearchParams(query).toString()}` : '';
    let response: Response;
    try {
      response = await fetcher(`${base}${resource}${search}`, {
        method: requestMethod.toUpperCase(),
        headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new ProviderRpcError(PROVIDER_ERRORS.disconnected, `the sandbox ledger at ${base} cannot be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ProviderRpcError(-32603, `the sandbox ledger answered HTTP ${response.status} with something that is not JSON`);
    }
    if (response.status === 401) throw new ProviderRpcError(PROVIDER_ERRORS.unauthorized, 'the sandbox ledger refused the token');
    if (!response.ok) {
      const { code, cause } = (parsed ?? {}) as { code?: string; cause?: string };
      throw new ProviderRpcError(PROVIDER_ERRORS.transactionRejected, `the ledger refused: ${cause ?? `HTTP ${response.status}`}${code ? ` (${code})` : ''}`, code ? { ledgerCode: code } : undefined);
    }
    return parsed;
  }

  let signer: Promise<Ed25519Signer> | null = null;
  const session = (): Promise<Ed25519Signer> => {
    signer ??= sessionSigner().catch((err: unknown) => {
      // A later call tries again: the platform may lack Ed25519 now, not forever.
      signer = null;
      throw new ProviderRpcError(-32603, `the sandbox wallet could not make its Ed25519 key with WebCrypto: ${err instanceof Error ? err.message : String(err)}`);
    });
    return signer;
  };

  return providerShell({
    name: 'the sandbox wallet',
    provider: { id: 'bestex-sandbox', providerType: 'browser' },
    network: { networkId: 'bestex-sandbox', ledgerApi: base },
    // A platform without WebCrypto's Ed25519 shows no key: the wallet still executes every plan but one it must sign a message for, which the SDK refuses unsigned.
    account: async () => accountOf(options.party, { publicKey: await session().then((s) => s.publicKey, () => ''), networkId: 'bestex-sandbox', signingProviderId: 'bestex-sandbox' }),
    signMessage: async (message) => (await session()).signMessage(message),
    ledgerApi(params) {
      const p = (params ?? {}) as { requestMethod?: string; resource?: string; body?: unknown; query?: Record<string, string> };
      if (typeof p.resource !== 'string' || !p.resource.startsWith('/')) throw new ProviderRpcError(-32602, 'ledgerApi needs a resource path');
      return call(p.requestMethod ?? 'get', p.resource, p.body, p.query);
    },
    submission(params) {
      const submitted = params as PrepareExecuteParams;
      // The dApp API leaves the commandId to the wallet when the dApp names none.
      const commandId = submitted.commandId ?? crypto.randomUUID();
      return {
        commandId,
        async run() {
          const { transaction } = (await call('post', '/v2/commands/submit-and-wait-for-transaction', {
            commands: { commands: submitted.commands, commandId, actAs: submitted.actAs, readAs: submitted.readAs ?? [], userId: USER_ID, disclosedContracts: submitted.disclosedContracts ?? [] },
          })) as { transaction: { updateId: string; offset: number } };
          return { updateId: transaction.updateId, completionOffset: transaction.offset };
        },
      };
    },
  });
}

/**
 * The sandbox's token registries, by instrument admin, as its manifest names them (`GET
 * <sandbox>/sandbox/v1/manifest`, no credential): what `execute` takes as `registries` in sandbox
 * mode. `sandboxUrl` is the sandbox's own URL (`make sandbox` prints it as `sandbox`).
 */
export async function sandboxRegistries(sandboxUrl: string, fetcher: Fetch = (input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init)): Promise<Record<string, string>> {
  const url = `${sandboxUrl.replace(/\/+$/, '')}/sandbox/v1/manifest`;
  const response = await fetcher(url);
  const manifest = (await response.json().catch(() => null)) as { registries?: unknown } | null;
  const registries = manifest?.registries;
  if (!response.ok || typeof registries !== 'object' || registries === null || !Object.values(registries).every((v) => typeof v === 'string')) {
    throw new Error(`${url} did not answer a sandbox manifest with its registries (HTTP ${response.status})`);
  }
  return registries as Record<string, string>;
}
