// The key portal's contract (openapi/portal.yaml), named as core/contract/v1.ts names the swap
// API's: each schema under the spec's name for it.
import type { components } from '../../generated/portal/types.js';

type Schemas = components['schemas'];
export type NewKeyRequest = Schemas['NewKeyRequest'];
export type IssuedKey = Schemas['IssuedKey'];
export type KeyView = Schemas['KeyView'];
export type OriginsRequest = Schemas['OriginsRequest'];
export type KeyOrigins = Schemas['KeyOrigins'];
export type RevokedKey = Schemas['RevokedKey'];
