// The calls to an instrument admin's token registry (CIP-0056's transfer-instruction API): the
// transfer factory a transfer is exercised on, and the choice context of a withdraw.
import { BestexError } from '../errors.js';
import type { DisclosedContract } from '../provider.js';
import type { ExecuteOptions } from './options.js';

export interface Factory {
  readonly factoryId: string;
  readonly choiceContext: { readonly choiceContextData?: unknown; readonly disclosedContracts?: readonly DisclosedContract[] };
}

/**
 * The registry that serves `admin`'s instruments: from the options' `registries`, else their one
 * `registryUrl`, else the one the plan names (`named`, version 2's `registries`): what the caller
 * says wins over the plan.
 */
function registryOf(options: ExecuteOptions, named: Readonly<Record<string, string>>, admin: string): string {
  const url = options.registries?.[admin] ?? options.registryUrl ?? named[admin];
  if (!url) {
    throw new BestexError(`no token registry is configured for the instrument admin ${admin}: pass registries (by admin) or registryUrl`, { status: null, code: 'registry_unconfigured' });
  }
  return url.replace(/\/+$/, '');
}

/** A call to an instrument admin's token registry, asked directly, as public registries are: no credential. */
async function registry<T>(options: ExecuteOptions, named: Readonly<Record<string, string>>, admin: string, resource: string, body: unknown): Promise<T> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const url = `${registryOf(options, named, admin)}${resource}`;
  let response: Response;
  try {
    response = await fetcher(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    throw new BestexError(`the registry at ${url} cannot be reached: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'submit_failed', cause: err });
  }
  if (!response.ok) {
    const refusal = (await response.json().catch(() => null)) as { error?: unknown } | null;
    throw new BestexError(`the registry refused ${resource} (HTTP ${response.status}${typeof refusal?.error === 'string' ? `: ${refusal.error}` : ''})`, { status: response.status, code: 'submit_failed' });
  }
  return (await response.json()) as T;
}

export const transferFactory = (options: ExecuteOptions, named: Readonly<Record<string, string>>, admin: string, body: unknown) =>
  registry<Factory>(options, named, admin, '/registry/transfer-instruction/v1/transfer-factory', body);

/** What the registry gives for the withdraw of an open transfer offer. */
export const withdrawContext = (options: ExecuteOptions, named: Readonly<Record<string, string>>, admin: string, offerCid: string) =>
  registry<Factory['choiceContext']>(options, named, admin, `/registry/transfer-instruction/v1/${encodeURIComponent(offerCid)}/choice-contexts/withdraw`, { meta: {}, excludeDebugFields: true });
