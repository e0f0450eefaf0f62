// A Canton party id as the contract accepts one: `<hint>::1220<64 lowercase hex digits>`. The same
// pattern as the spec's PartyId schema (a test keeps them equal); format only, no ledger lookup.
export const PARTY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,184}::1220[0-9a-f]{64}$/;

export const isPartyId = (value: unknown): value is string => typeof value === 'string' && PARTY_ID.test(value);
