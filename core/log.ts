// Core's view of a logger: pino-compatible, and nothing else of it, so no module of the domain
// depends on the logging library the HTTP edge chose.
export interface CoreLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}
