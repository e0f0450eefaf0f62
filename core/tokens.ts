import { badRequest, DomainError } from './errors.js';

export interface Token {
  /** The symbol callers send. */
  readonly symbol: 'CC' | 'USDCx' | 'CBTC';
  /** The registry instrument id, used in every response. */
  readonly instrument: 'Amulet' | 'USDCx' | 'CBTC';
}

export const CC: Token = { symbol: 'CC', instrument: 'Amulet' };
export const USDCX: Token = { symbol: 'USDCx', instrument: 'USDCx' };
export const CBTC: Token = { symbol: 'CBTC', instrument: 'CBTC' };

export const TOKENS: readonly Token[] = [CC, USDCX, CBTC];
export const KNOWN_SYMBOLS = TOKENS.map((t) => t.symbol).join(', ');

const bySymbol = new Map<string, Token>([...TOKENS.map((t) => [t.symbol.toLowerCase(), t] as const), ['amulet', CC]]);

/** Matches case-insensitively; `Amulet` is accepted for CC since responses use that name. */
export function resolveToken(symbol: string, param: string): Token {
  const token = bySymbol.get(symbol.toLowerCase());
  if (!token) throw new DomainError('unknown_token', `unknown token '${symbol}' in ${param}: known symbols are ${KNOWN_SYMBOLS}`);
  return token;
}

/** The two tokens of a `from`/`to` pair, which must be different. */
export function resolvePair(from: string, to: string): { give: Token; want: Token } {
  const give = resolveToken(from, 'from');
  const want = resolveToken(to, 'to');
  if (give === want) throw badRequest("'from' and 'to' must be different tokens");
  return { give, want };
}

/** An unordered pair's stable name, CC first: "CC/USDCx". */
export function pairKey(a: Token, b: Token): string {
  const [x, y] = [a, b].sort((p, q) => TOKENS.indexOf(p) - TOKENS.indexOf(q)) as [Token, Token];
  return `${x.symbol}/${y.symbol}`;
}
