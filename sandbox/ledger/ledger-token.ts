// The sandbox participant's bearer token: shaped as the JWT a participant's identity provider
// issues, naming the user it acts as, and read back to that user.

/** The user the sandbox's tokens name: the participant's operator. */
export const SANDBOX_USER = 'sandbox-operator';

/**
 * A bearer token shaped as the JWT a participant's identity provider issues, naming the sandbox's
 * user: Canton's own clients decode a token before they send it and refuse one that is no JWT.
 * `signature` makes it one no one guesses; the sandbox compares the whole token.
 */
export const sandboxLedgerToken = (signature: string) =>
  `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: SANDBOX_USER, scope: 'daml_ledger_api' })).toString('base64url')}.${signature}`;

/** The bearer token the sandbox ledger accepts unless LEDGER_TOKEN names another. */
export const SANDBOX_LEDGER_TOKEN = sandboxLedgerToken('sandbox-ledger-token');

/** The user a bearer token names: its JWT `sub`, or the sandbox's operator for a token that is no JWT. */
export function userOfToken(token: string): string {
  const payload = token.split('.')[1];
  try {
    const sub = (JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    if (typeof sub === 'string' && sub !== '') return sub;
  } catch {
    // Not a JWT: the operator's token all the same.
  }
  return SANDBOX_USER;
}
