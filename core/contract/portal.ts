// The key portal's contract (openapi/portal.yaml), named as core/contract/v1.ts names the swap
// API's: each schema under the spec's name for it.
import type { components, operations } from '../../generated/portal/types.js';

type Schemas = components['schemas'];
export type NewKeyRequest = Schemas['NewKeyRequest'];
export type IssuedKey = Schemas['IssuedKey'];
export type KeyView = Schemas['KeyView'];
export type OriginsRequest = Schemas['OriginsRequest'];
export type KeyOrigins = Schemas['KeyOrigins'];
export type RevokedKey = Schemas['RevokedKey'];
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
export type ListWebhookDeliveriesQuery = operations['listWebhookDeliveries']['parameters']['query'];
export type Trade = Schemas['Trade'];
export type TradeLeg = Schemas['TradeLeg'];
export type TradeFees = Schemas['TradeFees'];
export type TradePage = Schemas['TradePage'];
export type TradeSummary = Schemas['TradeSummary'];
export type TradeDay = Schemas['TradeDay'];
export type TokenAmount = Schemas['TokenAmount'];
export type VenueSuccess = Schemas['VenueSuccess'];
export type ListPartnerTradesQuery = NonNullable<operations['listPartnerTrades']['parameters']['query']>;
export type GetPartnerTradeSummaryQuery = NonNullable<operations['getPartnerTradeSummary']['parameters']['query']>;
export type ExportPartnerTradesQuery = NonNullable<operations['exportPartnerTrades']['parameters']['query']>;
