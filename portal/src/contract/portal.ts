// The key portal's contract (openapi/portal.yaml), as the page names it: the same names as the
// service's core/contract/portal.ts, each schema under its spec name, over the generated types.
import type { components } from '../../../generated/portal/types.js';

type Schemas = components['schemas'];
export type IssuedKey = Schemas['IssuedKey'];
export type KeyView = Schemas['KeyView'];
export type KeyOrigins = Schemas['KeyOrigins'];
export type RevokedKey = Schemas['RevokedKey'];
export type UsageDay = Schemas['UsageDay'];
export type Error = Schemas['Error'];
export type NewWebhookEndpoint = Schemas['NewWebhookEndpoint'];
export type WebhookEndpointUpdate = Schemas['WebhookEndpointUpdate'];
export type WebhookEndpointRef = Schemas['WebhookEndpointRef'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpoints = Schemas['WebhookEndpoints'];
export type IssuedWebhookSecret = Schemas['IssuedWebhookSecret'];
export type DeletedWebhookEndpoint = Schemas['DeletedWebhookEndpoint'];
export type WebhookEventType = Schemas['WebhookEventType'];
export type WebhookAttempt = Schemas['WebhookAttempt'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookDeliveries = Schemas['WebhookDeliveries'];
export type ReplayRequest = Schemas['ReplayRequest'];
export type Token = Schemas['Token'];
export type TradeState = Schemas['TradeState'];
export type TradeLeg = Schemas['TradeLeg'];
export type FeePair = Schemas['FeePair'];
export type TradeFees = Schemas['TradeFees'];
export type Trade = Schemas['Trade'];
export type TradePage = Schemas['TradePage'];
export type TokenAmount = Schemas['TokenAmount'];
export type TradeDay = Schemas['TradeDay'];
export type VenueSuccess = Schemas['VenueSuccess'];
export type SlippageSummary = Schemas['SlippageSummary'];
export type TradeSummary = Schemas['TradeSummary'];
