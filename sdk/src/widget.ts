// '@bestex/sdk/widget': <bestex-swap>, the embeddable swap widget, a framework-agnostic custom
// element. It quotes (every venue ranked as the quote ranks them, with its net, its fee and where
// it applies, the disclosed fees and the edge; unavailable venues with their reason in words), heads
// the table with the best quote beside the best the person can execute now, shows the execution
// venue's price impact, refreshes while shown, and, with a partner key, creates a plan and
// dispatches `bestex:plan` ({plan, quote}, bubbling and composed) for the host to execute with its
// own wallet; the host may hand the execution back (`executionHooks()`) to show its status. It
// speaks API version 1 unless api-version="2": then its quotes, the venues it may plan (those the
// quote says can be executed) and the plan and quote in bestex:plan are version 2's, and a quote's
// split is shown as the route and planned by its legs (each leg's fate shown as it settles; a
// wallet that cannot batch the legs gets the best venue alone, planned and dispatched again), and
// once a plan's deposit is on the ledger the service's own status of it is shown beside the
// execution's (the SDK's watch; where the two end differently the wallet's view is kept, and said).
// Importing it defines nothing and touches no window, document or storage: a browser calls
// defineBestexSwap() (the served /sdk/widget.js does), so server-side rendering never breaks.
// docs/widget.md is its guide. Its parts: widget/element.ts (behaviour), widget/render.ts (DOM),
// widget/rules.ts (rules with no DOM), widget/style.ts (look).
//
// Attributes (and the same as properties: apiBase, apiKey, apiVersion, from, to, amount,
// slippageBps, party, priceImpactWarningBps): api-base, api-key, api-version, from, to, amount,
// slippage-bps, party, price-impact-warning-bps. Theming: CSS custom properties (--bestex-accent,
// --bestex-text, --bestex-muted, --bestex-surface, --bestex-radius) and ::part(form), ::part(best),
// ::part(best-note), ::part(venues), ::part(venue), ::part(execution), ::part(split),
// ::part(split-leg), ::part(split-total), ::part(edge), ::part(impact), ::part(impact-warning),
// ::part(create), ::part(error), ::part(dismiss), ::part(plan), ::part(plan-leg), ::part(status),
// ::part(service), ::part(legs), ::part(leg).
export { BestexSwapElement, defineBestexSwap } from './widget/element.js';
