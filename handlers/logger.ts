// pino JSON logs. Secrets and party ids never reach a line: request logs carry the route pattern,
// never the URL (whose query may hold a party), and the redaction below covers fields that could
// hold a key or a party if a future log call passed them.
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { LogLevel } from '../core/config.js';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'authorization',
  'apiKey',
  'key',
  'party',
  'takerParty',
  'feeRecipient',
  '*.authorization',
  '*["x-api-key"]',
  '*.apiKey',
  '*.key',
  '*.party',
  '*.takerParty',
  '*.feeRecipient',
];

export function loggerOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    base: { service: 'bestex' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      // Only what identifies the request: never the URL, headers or body.
      req: (req: { method?: string; routeOptions?: { url?: string } }) => ({ method: req.method, route: req.routeOptions?.url }),
      err: pino.stdSerializers.err,
    },
  };
}

export const createLogger = (level: LogLevel, destination?: DestinationStream): Logger =>
  destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
