// A sandbox of a test's own, in the test's process (the sandbox's own tests inspect its ledger and
// market directly), which the service under test reaches over HTTP only, at SANDBOX_URL, as a
// deployment reaches real venues and a participant.
import type { CantonProvider } from '@bestex/sdk';
import { createLiveVenues } from '../../core/venues/live-venues.js';
import type { Venue } from '../../core/venues/venue.js';
import { sandboxVenuesConfig } from '../../core/sandbox-link/manifest.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/sandbox.js';

export interface TestSandbox extends Sandbox {
  /** The service's real venue adapters, pointed at this sandbox. */
  adapters(timeoutMs?: number): Venue[];
}

export async function testSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const sandbox = await startSandbox({ venuesPort: 0, ledgerHost: '127.0.0.1', ledgerPort: 0, ...options });
  return { ...sandbox, adapters: (timeoutMs = 800) => createLiveVenues(sandboxVenuesConfig(sandbox.manifest, timeoutMs)) };
}

type Controlled = Pick<Sandbox, 'manifest' | 'ledgerToken'>;

/** A call to the sandbox's control API (fund a party, move a pool), as its operator makes it; anything but 200 throws. */
export async function sandboxControl(sandbox: Controlled, resource: string, body: unknown): Promise<void> {
  const response = await fetch(new URL(resource, sandbox.manifest.ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${resource}: ${response.status} ${await response.text()}`);
}

/** Funds `party` with each token's amount (the registry names the control API takes: CC, USDCx, CBTC). */
export async function fund(sandbox: Controlled, party: string, amounts: Readonly<Record<string, string>>): Promise<void> {
  for (const [token, amount] of Object.entries(amounts)) await sandboxControl(sandbox, '/sandbox/v1/fund', { party, token, amount });
}

/** `provider`, as a wallet the market moves under: `before` runs as each execution is prepared, before the wallet prepares it. */
export function movedBeforePrepare(provider: CantonProvider, before: () => Promise<void>): CantonProvider {
  return {
    ...provider,
    request: async (args) => {
      if (args.method.startsWith('prepareExecute')) await before();
      return provider.request(args);
    },
    on: provider.on.bind(provider),
    removeListener: provider.removeListener.bind(provider),
  };
}
