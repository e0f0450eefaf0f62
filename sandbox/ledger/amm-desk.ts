// What every sandbox venue desk that settles deposits to one party from its market's
// constant-product pools shares (Nightly's swap address, OneSwap's deposit address): the pools
// under the desk's party, their reserves as its holdings, and a pool's price moved on the ledger.
// Each desk adds how it matches and answers a deposit.
import { ZERO } from '../../core/decimal.js';
import { CC, type Token } from '../../core/tokens.js';
import type { SandboxVenueSpec } from '../venues/sandbox-venue.js';
import { movePoolPrice, type SandboxPool } from './pool-operator.js';
import type { TokenContracts } from './token-contracts.js';
import type { ActionNode, CreateNode } from './transaction-tree.js';

export interface AmmDeskOptions {
  /** The venue's market: its pools are the desk's. */
  readonly spec: SandboxVenueSpec;
  /** The party deposits go to, which holds the pools' reserves. */
  readonly party: string;
}

export abstract class AmmDesk<Options extends AmmDeskOptions> {
  /** The market's pools, each under the desk's party. */
  readonly pools: readonly SandboxPool[];

  constructor(
    protected readonly contracts: TokenContracts,
    protected readonly options: Options,
    protected readonly now: () => Date,
    protected readonly commit: (commandId: string, roots: readonly ActionNode[]) => void,
  ) {
    const { spec, party } = options;
    this.pools = spec.pricing.kind === 'amm' ? spec.pricing.pools.map((pool) => ({ party, pool, tokens: [CC, pool.quote] as const })) : [];
  }

  get party(): string {
    return this.options.party;
  }

  /** The pools' reserves as the party's holdings: one of CC for all pools, one of each other token. */
  reserveHoldings(): CreateNode[] {
    if (this.pools.length === 0) return [];
    const cc = this.pools.reduce((sum, p) => sum.plus(p.pool.baseReserve), ZERO);
    return [
      this.contracts.mint(this.party, CC.instrument, cc),
      ...this.pools.map((p) => this.contracts.mint(this.party, p.pool.quote.instrument, p.pool.quoteReserve)),
    ];
  }

  /** The pool trading `a` against `b`, either way round. */
  poolFor(a: Token, b: Token): SandboxPool | undefined {
    return this.pools.find((p) => p.tokens.includes(a) && p.tokens.includes(b) && a !== b);
  }

  /** Moves a pool's price by `bps` (movePoolPrice says how). */
  movePool(entry: SandboxPool, first: Token, bps: number): { before: string; after: string } {
    return movePoolPrice(this.contracts, entry, first, bps, this.commit);
  }
}
